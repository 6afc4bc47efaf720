// e2g's one script, for the token page (/tokens/REV/PATH): a click on a token, or
// Enter or Space on a focused one, opens a panel with its commit and review. The
// panel shows a copy of the commit's legend entry, which the server rendered and
// escaped; nothing here builds markup from text. Without this script the page still
// reads: colours, a title on each token, and the legend's entries.
"use strict";

(function () {
  const panel = document.getElementById("token-panel");
  const code = document.querySelector("pre.tokens");
  if (!panel || !code) {
    return;
  }
  const SHA = /^[0-9a-f]{40,64}$/;
  let opener = null;

  function mark(sha) {
    for (const span of code.querySelectorAll(".t.chosen")) {
      span.classList.remove("chosen");
    }
    if (sha) {
      for (const span of code.querySelectorAll('.t[data-commit="' + sha + '"]')) {
        span.classList.add("chosen");
      }
    }
  }

  function close() {
    panel.hidden = true;
    panel.replaceChildren();
    mark(null);
    if (opener) {
      opener.focus();
      opener = null;
    }
  }

  function open(span) {
    const sha = span.getAttribute("data-commit") || "";
    const detail = SHA.test(sha) ? document.getElementById("detail-" + sha) : null;
    if (!detail) {
      return;
    }
    const copy = detail.cloneNode(true);
    copy.removeAttribute("id");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "close";
    button.textContent = "Close";
    button.setAttribute("aria-label", "close the panel");
    button.addEventListener("click", close);
    const where = document.createElement("p");
    where.className = "muted where";
    where.textContent = "line " + lineOf(span) + ": " + span.textContent;
    panel.replaceChildren(button, where, copy);
    panel.hidden = false;
    opener = span;
    mark(sha);
  }

  function lineOf(span) {
    const line = span.closest(".line");
    return line ? line.id.replace(/^L/, "") : "?";
  }

  function tokenOf(target) {
    return target instanceof Element ? target.closest(".t[data-commit]") : null;
  }

  code.addEventListener("click", function (event) {
    const span = tokenOf(event.target);
    if (span) {
      open(span);
    }
  });
  code.addEventListener("keydown", function (event) {
    const span = tokenOf(event.target);
    if (span && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      open(span);
    }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !panel.hidden) {
      close();
    }
  });
})();
