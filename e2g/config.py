"""Settings, resolved once per command.

The data directory is, in order: the `--data-dir` flag, `E2G_DATA_DIR`,
`$XDG_DATA_HOME/e2g`, then `~/.local/share/e2g`. An optional TOML file at
`$XDG_CONFIG_HOME/e2g/config.toml` (default `~/.config/e2g/config.toml`) may set
`data_dir`, `index_bodies` and per-list URL templates:

    [lists."io-uring.vger.kernel.org"]
    url = "https://lore.kernel.org/io-uring/{message_id}/"

This is the only module that reads the environment or the home directory; everything
below receives a Settings value.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from e2g.errors import UsageError

DEFAULT_URL_TEMPLATE = "https://lore.kernel.org/r/{message_id}"


@dataclass(frozen=True, slots=True)
class Settings:
    data_dir: Path
    index_bodies: bool = False
    url_templates: Mapping[str, str] = field(default_factory=dict)
    default_url_template: str = DEFAULT_URL_TEMPLATE

    @property
    def store_path(self) -> Path:
        return self.data_dir / "store.sqlite3"

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "fulltext"

    def url_for(self, message_id: str, list_name: str | None) -> str:
        from urllib.parse import quote

        template = self.url_templates.get(list_name or "", self.default_url_template)
        return template.format(message_id=quote(message_id, safe="@!$&'()*+,;=:~-._"))


def _config_file(env: Mapping[str, str], home: Path) -> Path:
    base = env.get("XDG_CONFIG_HOME") or str(home / ".config")
    return Path(base) / "e2g" / "config.toml"


def _read_config(path: Path) -> dict[str, object]:
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise UsageError(f"cannot read config file {path}: {err}") from None


def _url_templates(config: Mapping[str, object]) -> dict[str, str]:
    lists = config.get("lists", {})
    templates: dict[str, str] = {}
    if isinstance(lists, dict):
        for name, entry in lists.items():
            if isinstance(entry, dict) and isinstance(entry.get("url"), str):
                templates[str(name)] = entry["url"]
    return templates


def resolve(
    *,
    data_dir: Path | None = None,
    index_bodies: bool | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> Settings:
    """Build Settings from flags, then environment, then config file, then defaults."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    config = _read_config(_config_file(env, home))
    if data_dir is None and env.get("E2G_DATA_DIR"):
        data_dir = Path(env["E2G_DATA_DIR"])
    if data_dir is None and isinstance(config.get("data_dir"), str):
        data_dir = Path(str(config["data_dir"])).expanduser()
    if data_dir is None:
        xdg = env.get("XDG_DATA_HOME")
        data_dir = (Path(xdg) if xdg else home / ".local" / "share") / "e2g"
    if index_bodies is None:
        index_bodies = bool(config.get("index_bodies", False))
    default_url = config.get("url", DEFAULT_URL_TEMPLATE)
    return Settings(
        data_dir=data_dir,
        index_bodies=index_bodies,
        url_templates=_url_templates(config),
        default_url_template=str(default_url),
    )
