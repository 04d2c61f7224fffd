"""The model of "Upstream changes" (the page of `dshaudit history`, and the
section `report --since` adds): what each first-parent commit from one pin
to another did to the findings, as plain data for the templates, with the
timeline and sparklines drawn as SVG path data."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dshaudit.git.log import pull_request
from dshaudit.moves.history_result import HistoryResult

if TYPE_CHECKING:
    from dshaudit.git.log import Commit

# The timeline's drawing box: the SVG stretches it to the page's width
# (preserveAspectRatio="none"), so no text is drawn inside it; labels are HTML.
CHART_WIDTH, CHART_HEIGHT, SPARK_WIDTH, SPARK_HEIGHT = 1000, 100, 100, 20


def _steps(series: list[int], width: int, height: int, pad: float) -> tuple[str, list[float], tuple[int, int]]:
    """A step line through `series` (a value before the first commit, then one
    after each), as SVG path data; the x of each commit; the value range drawn."""
    lo, hi = min(series), max(series)
    slots = len(series)

    def x(i: int) -> float:
        return round(i * width / slots, 2)

    def y(v: int) -> float:
        return round(height / 2 if hi == lo else pad + (hi - v) * (height - 2 * pad) / (hi - lo), 2)

    d = [f"M0 {y(series[0])}"]
    for i in range(1, slots):
        d.append(f"H{x(i)} V{y(series[i])}")
    d.append(f"H{width}")
    return " ".join(d), [x(i) for i in range(1, slots)], (lo, hi)


def _commit_link(web_url: str, sha: str) -> str:
    return f"{web_url.rstrip('/')}/commit/{sha}"


def history_model(result: HistoryResult, web_url: str) -> dict[str, Any]:
    """The "Upstream changes since the pin" section: totals, the timeline and
    sparklines (path data for inline SVG), the commits and the citations to re-read."""
    commits = result.commits
    f, t = result.from_pin, result.to_pin
    series = [result.holding_at_from] + [c.holding for c in commits]
    line, xs, (lo, hi) = _steps(series, CHART_WIDTH, CHART_HEIGHT, 6)
    drops = sorted((c for c in commits if c.broken), key=lambda c: -c.broken)[:3]
    desc = (
        f"{series[0]} citations hold at {f.name} and {series[-1]} at {t.name}, over {len(commits)} "
        f"first-parent commits."
        + (
            " The largest drops: "
            + ", ".join(
                f"{c.broken} at {c.commit.sha[:12]}" + (f" (#{c.pull_request})" if c.pull_request else "")
                for c in drops
            )
            + "."
            if drops
            else ""
        )
    )
    files = []
    for path in result.files:
        values = [result.holding_by_file_at_from.get(path, 0)] + [c.holding_by_file.get(path, 0) for c in commits]
        spark, _, _ = _steps(values, SPARK_WIDTH, SPARK_HEIGHT, 2)
        total = sum(1 for h in result.citations if h.citation.source.file == path)
        files.append(
            {
                "file": path,
                "citations": total,
                "at_from": values[0],
                "at_to": values[-1],
                "path": spark,
                "changed": len(set(values)) > 1,
                "title": f"{path}: {values[0]} of {total} citations hold at {f.name}, {values[-1]} at {t.name}",
            }
        )

    def commit_ref(c: Commit) -> dict[str, Any]:
        pr = pull_request(c.subject)
        return {
            "sha": c.sha,
            "short": c.sha[:12],
            "url": _commit_link(web_url, c.sha),
            "date": c.date[:10],
            "subject": c.subject,
            "pull_request": pr,
            "pull_request_url": f"{web_url.rstrip('/')}/pull/{pr}" if pr else None,
        }

    rows = [
        {
            **commit_ref(c.commit),
            "broken": c.broken,
            "restored": c.restored,
            "edited": c.edited,
            "shifted": c.shifted,
            "claims_changed": c.claims_changed,
            "holding": c.holding,
            "impact": c.impact,
        }
        for c in commits
        if c.touched
    ]
    reread = [
        {
            "source": h.citation.source.to_dict(),
            "text": h.citation.text,
            "status": h.at_to.status.value if h.at_to else "",
            "failing": h.failing,
            "first_broken": commit_ref(h.first_broken) if h.first_broken else None,
            "first_suspect": commit_ref(h.first_suspect) if h.first_suspect else None,
            "edited_at": [commit_ref(c) for c in h.edited_at],
            "restored_at": [commit_ref(c) for c in h.restored_at],
            "now_at": h.now_at,
        }
        for h in result.to_reread()
    ]
    claims = [
        {
            "source": c.claim.source.to_dict(),
            "kind": c.claim.kind,
            "text": c.claim.text,
            "before": c.as_dict()["before"],
            "after": c.after,
            "first_changed": commit_ref(c.first_changed),
            "status": c.at_to.status.value if c.at_to else "",
            "times": len(c.changed_at),
        }
        for c in result.claims
        if c.first_changed is not None
    ]
    return {
        "title": f"Upstream changes from {f.name} to {t.name}",
        "from": {"name": f.name, "sha": f.sha, "url": _commit_link(web_url, f.sha)},
        "to": {"name": t.name, "sha": t.sha, "url": _commit_link(web_url, t.sha)},
        "summary": result.lines()[:3],
        "commit_count": len(commits),
        "untouched": len(commits) - len(rows),
        "chart": {
            "width": CHART_WIDTH,
            "height": CHART_HEIGHT,
            "line": line,
            "lo": lo,
            "hi": hi,
            "area": f"{line} V{CHART_HEIGHT} H0 Z",
            "broke": [x for x, c in zip(xs, commits) if c.broken],
            "restored": [x for x, c in zip(xs, commits) if c.restored],
            "title": f"Citations holding at each commit from {f.name} to {t.name}",
            "desc": desc,
        },
        "spark": {"width": SPARK_WIDTH, "height": SPARK_HEIGHT},
        "files": files,
        "commits": rows,
        "reread": reread,
        "claims": claims,
    }
