"""`dshaudit.toml`: the upstream URL and the named pins, in one place."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dshaudit.core.errors import InputError
from dshaudit.core.model import SHA_RE, Pin

CONFIG_NAME = "dshaudit.toml"
DEFAULT_UPSTREAM = "https://github.com/deepseek-ai/deepseek-harness"
MAX_CONFIG_BYTES = 1024 * 1024


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


def discover_config(documents: list[Path]) -> Path | None:
    """The configuration for these documents: dshaudit.toml in the first
    document's folder or above, else in the working directory or above."""
    for doc in documents[:1]:
        folder = doc if doc.is_dir() else doc.parent
        found = find_config(folder)
        if found is not None:
            return found
    return find_config()


def load_config(path: Path | None = None, documents: list[Path] | None = None) -> Config:
    """The configuration at `path`; else the one found for `documents` (or the
    working directory); else the packaged default (upstream URL and named pins)."""
    if path is None:
        path = discover_config(documents or [])
        if path is None:
            from importlib import resources

            text = resources.files("dshaudit").joinpath("default.toml").read_text(encoding="utf-8")
            return _parse(tomllib.loads(text), None, "the packaged default configuration")
    from dshaudit.platform.writing import read_regular

    # A regular file of sane size, opened without blocking (a FIFO given as --config is refused, not waited on).
    raw = read_regular(path, str(path), MAX_CONFIG_BYTES).data
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise InputError(f"{path}: malformed configuration: {exc}") from None
    return _parse(data, path, str(path))


def _kind(value: object) -> str:
    """A TOML value's kind, in TOML's words, for messages."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return "a date or time"


def _parse(data: dict[str, Any], path: Path | None, where: str) -> Config:
    """The configuration, validated once, whole: every key that has a meaning
    has the type it must have, and a message names the key that does not."""

    def wrong(key: str, wanted: str, value: object) -> InputError:
        return InputError(f"{where}: `{key}` must be {wanted}, not {_kind(value)}")

    upstream = data.get("upstream", {})
    if not isinstance(upstream, dict):
        raise wrong("upstream", 'a table ([upstream] with url = "…")', upstream)
    url = upstream.get("url", DEFAULT_UPSTREAM)
    if not isinstance(url, str):
        raise wrong("upstream.url", "a string (the clone URL)", url)
    if not url.strip():
        raise InputError(f"{where}: `upstream.url` must not be empty")
    web = upstream.get("web", url.removesuffix(".git"))
    if not isinstance(web, str):
        raise wrong("upstream.web", "a string (the web address of DSH)", web)
    raw_pins = data.get("pins", {})
    if not isinstance(raw_pins, dict):
        raise wrong("pins", 'a table ([pins] with name = "40-hex SHA" lines)', raw_pins)
    pins = {}
    for name, sha in raw_pins.items():
        if name.startswith("-") or not name.replace("-", "").replace(".", "").replace("_", "").isalnum():
            raise InputError(f"{where}: pin name {name!r} must be letters, digits, '.', '_' or '-'")
        if not isinstance(sha, str) or not SHA_RE.match(sha):
            shown = repr(sha) if isinstance(sha, str) else _kind(sha)
            raise InputError(f"{where}: pin {name!r} must be a full 40-hex lowercase SHA, not {shown}")
        pins[name] = Pin(name, sha)
    default_pin = data.get("default_pin")
    if default_pin is not None and not isinstance(default_pin, str):
        raise wrong("default_pin", "a string (one of the pins)", default_pin)
    if default_pin is not None and default_pin not in pins:
        raise InputError(f"{where}: default_pin {default_pin!r} is not one of the pins ({', '.join(sorted(pins))})")
    return Config(path, url, web, pins, default_pin)
