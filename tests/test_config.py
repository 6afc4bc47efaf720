"""Settings: where a message's list archive page is, and only where one is known."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2g import config


def _settings(tmp_path: Path, toml: str = "") -> config.Settings:
    home = tmp_path / "home"
    (home / ".config" / "e2g").mkdir(parents=True)
    (home / ".config" / "e2g" / "config.toml").write_text(toml)
    return config.resolve(data_dir=tmp_path / "d", env={}, home=home)


@pytest.mark.parametrize(
    ("list_name", "url"),
    [
        ("io-uring.vger.kernel.org", "https://lore.kernel.org/r/a%2Fb@c"),
        ("regressions.lists.linux.dev", "https://lore.kernel.org/r/a%2Fb@c"),
        ("frob-devel.lists.example.org", None),  # lore does not carry it
        ("pipermail", None),
        (None, None),
        ("evil.vger.kernel.org.example.com", None),
    ],
)
def test_a_link_only_where_the_archive_is_known(
    tmp_path: Path, list_name: str | None, url: str | None
) -> None:
    assert _settings(tmp_path).url_for("a/b@c", list_name) == url


def test_the_config_file_names_archives_for_every_list_or_one(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        'url = "https://mail.example.org/m/{message_id}"\n'
        '[lists."frob-devel.lists.example.org"]\n'
        'url = "https://frob.example.org/arch/{message_id}/"\n',
    )
    assert settings.url_for("x@y", "frob-devel.lists.example.org") == (
        "https://frob.example.org/arch/x@y/"
    )
    assert settings.url_for("x@y", "io-uring.vger.kernel.org") == (
        "https://mail.example.org/m/x@y"
    )
    assert settings.url_for("x@y", None) == "https://mail.example.org/m/x@y"


def test_metrics_bots_come_from_the_config_file(tmp_path: Path) -> None:
    from e2g.config import DEFAULT_BOTS, resolve
    from e2g.errors import UsageError

    assert (
        resolve(data_dir=tmp_path, env={}, home=tmp_path).metrics_bots == DEFAULT_BOTS
    )
    folder = tmp_path / ".config" / "e2g"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text('[metrics]\nbots = ["CI@Example.org"]\n')
    assert resolve(data_dir=tmp_path, env={}, home=tmp_path).metrics_bots == (
        "ci@example.org",
    )
    (folder / "config.toml").write_text("[metrics]\nbots = 3\n")
    with pytest.raises(UsageError, match=r"\[metrics\] bots"):
        resolve(data_dir=tmp_path, env={}, home=tmp_path)


def test_the_queue_metrics_and_tokens_sections_live_side_by_side(
    tmp_path: Path,
) -> None:
    settings = _settings(
        tmp_path,
        "[queue]\nquiet_days = 30\n"
        '[metrics]\nbots = ["ci@example.org"]\n'
        '[tokens]\ncache_bytes = "512M"\n',
    )
    assert settings.queue_quiet_days == 30
    assert settings.metrics_bots == ("ci@example.org",)
    assert settings.token_cache_bytes == 512 << 20
