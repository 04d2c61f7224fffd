"""`dshaudit.toml`: the upstream URL and the named pins, in one place."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .model import Pin
from .repository import SHA_RE

CONFIG_NAME = "dshaudit.toml"
DEFAULT_UPSTREAM = "https://github.com/deepseek-ai/deepseek-harness"


@dataclass(frozen=True)
class Config:
    path: Path | None
    upstream_url: str
    web_url: str
    pins: dict[str, Pin]
    default_pin: str | None = None  # for `dshaudit show` without @PIN

    @property
    def root(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    def describe_pins(self) -> str:
        return ", ".join(sorted(self.pins)) or "none"


def find_config(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def load_config(path: Path | None = None) -> Config:
    if path is None:
        path = find_config()
        if path is None:
            return Config(None, DEFAULT_UPSTREAM, DEFAULT_UPSTREAM, {}, None)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read configuration: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: malformed configuration: {exc}") from None
    upstream = data.get("upstream", {})
    url = upstream.get("url", DEFAULT_UPSTREAM)
    web = upstream.get("web", url.removesuffix(".git"))
    pins = {}
    for name, sha in (data.get("pins") or {}).items():
        if not isinstance(sha, str) or not SHA_RE.match(sha):
            raise InputError(f"{path}: pin {name!r} must be a full 40-hex lowercase SHA, not {sha!r}")
        if name.startswith("-") or not name.replace("-", "").replace(".", "").replace("_", "").isalnum():
            raise InputError(f"{path}: pin name {name!r} must be letters, digits, '.', '_' or '-'")
        pins[name] = Pin(name, sha)
    if not isinstance(url, str) or not isinstance(web, str):
        raise InputError(f"{path}: [upstream] url and web must be strings")
    default_pin = data.get("default_pin")
    if default_pin is not None and default_pin not in pins:
        raise InputError(f"{path}: default_pin {default_pin!r} is not one of the pins ({', '.join(sorted(pins))})")
    return Config(path, url, web, pins, default_pin)
