"""Reports built from stored results only: never re-runs anything.

- `build_html(root, out)`: one self-contained `index.html` (figures embedded): which papers
  reproduce (one row per planned paper), a legend, every claim in a filterable table, then per
  paper and experiment the claims with their verdicts beside the paper's numbers, figures, and a
  table of every metric as mean ± 95% Student-t CI over seeds.
- `update_docs(root, docs)`: rewrites the generated blocks of `docs/papers/<slug>.md` (results,
  the claims whose expected quick and full verdicts differ, deviations collected from
  `# DEVIATION:` tags, metric glossary, stored benchmark tables) and `docs/index.md`. With
  `check=True` it only reports which files are stale.
"""

from __future__ import annotations

import html
import json
import logging
import re
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from iclr25.core import registry
from iclr25.core.claims import Claim, ClaimResult
from iclr25.core.envinfo import git
from iclr25.core.experiment import Experiment
from iclr25.core.results import RunResult, atomic_write_text, iter_run_dirs, load_results
from iclr25.core.runner import judge_claims
from iclr25.core.stats import Interval, mean_ci

log = logging.getLogger(__name__)

PRESET_ORDER = ("full", "quick", "smoke")
VERDICT_MARK = {
    "reproduced": "✅ reproduced",
    "inconclusive": "❔ inconclusive",
    "contradicted": "❌ contradicted",
}
PAPERS_SRC = Path(__file__).resolve().parents[1] / "papers"


@dataclass(frozen=True)
class RunGroup:
    """The stored results of one experiment variant."""

    experiment: Experiment
    variant: str
    results: list[RunResult]

    @property
    def ok(self) -> list[RunResult]:
        """Successful seeds."""
        return [r for r in self.results if r.status == "ok"]

    def verdicts(self) -> list[ClaimResult]:
        """Claim verdicts over the successful seeds."""
        return judge_claims(self.experiment, self.results)

    def metric_table(self) -> list[tuple[str, str, Interval]]:
        """`(key, direction, interval)` for every metric, sorted by metric then method."""
        values: dict[str, list[float]] = defaultdict(list)
        for r in self.ok:
            for k, v in r.metrics.items():
                if v is not None:
                    values[k].append(v)
        keys = sorted(values, key=lambda k: (k.split("/", 1)[-1], k))
        rows = []
        for k in keys:
            m = self.experiment.metric_for(k)
            rows.append((k, m.direction if m else "", mean_ci(values[k])))
        return rows

    @property
    def cpu(self) -> str | None:
        """The CPU capability the seeds ran on (`envinfo.cpu_capability`), or None when it
        was not recorded or differs between seeds."""
        cpus = {r.env.get("cpu_capability") for r in self.results}
        return cpus.pop() if len(cpus) == 1 else None

    def runtime(self) -> float:
        """Total seconds of `run()` over seeds."""
        return sum(r.runtime_s for r in self.results)


def collect(root: Path, slugs: Sequence[str] | None = None) -> list[RunGroup]:
    """Load every run folder under `root` whose experiment is registered (optionally filtered)."""
    known = set(registry.experiment_names())
    groups = []
    for name, variant, folder in iter_run_dirs(root):
        if name not in known or (slugs and name.split(".")[0] not in slugs):
            continue
        groups.append(RunGroup(registry.get_experiment(name), variant, load_results(folder)))
    return groups


def canonical(groups: Sequence[RunGroup]) -> dict[str, RunGroup]:
    """Per experiment, the group of the largest plain preset (full > quick > smoke)."""
    best: dict[str, RunGroup] = {}
    for g in groups:
        if g.variant not in PRESET_ORDER:
            continue
        cur = best.get(g.experiment.name)
        if cur is None or PRESET_ORDER.index(g.variant) < PRESET_ORDER.index(cur.variant):
            best[g.experiment.name] = g
    return best


def _fmt_effect(v: ClaimResult) -> str:
    c = v.claim
    if c.control_key is None:
        return f"{v.treatment.fmt()} vs {c.control:g}"
    return f"{v.treatment.fmt()} vs {v.control.fmt()}"


def _fmt_diff(v: ClaimResult) -> str:
    if v.claim.deterministic:
        return f"{v.effect.mean:.3g} (exact)"
    if v.effect.n < 2:
        return "n/a"
    return f"{v.effect.mean:.3g} [{v.effect.low:.3g}, {v.effect.high:.3g}]"


def _fmt_n(v: ClaimResult) -> str:
    return "1 (deterministic)" if v.claim.deterministic else str(v.effect.n)


def why(v: ClaimResult, preset: str, cpu: str | None = None) -> str:
    """The claim's expected-verdict reason at `preset` on a `cpu`, flagged when the verdict
    differs."""
    exp = v.claim.expected(preset, cpu)
    if exp is None:
        return ""
    verdicts, reason = exp
    if v.verdict not in verdicts:
        on = f" on {cpu}" if cpu and cpu in v.claim.cpu_specific(preset) else ""
        return f"NOT AS EXPECTED: expected {' or '.join(verdicts)} at {preset}{on}" + (
            f": {reason}" if reason else ""
        )
    return reason


def claims_markdown(group: RunGroup) -> str:
    """The claims table of one group as Markdown."""
    lines = [
        "| claim | paper | ours (mean ± 95% CI) | difference (95% CI) | n | verdict | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for v in group.verdicts():
        lines.append(
            f"| **{v.claim.id}**: {_cell(v.claim.statement)} | "
            f"{_cell(v.claim.paper_value or '—')} | {_fmt_effect(v)} | {_fmt_diff(v)} | "
            f"{_fmt_n(v)} | {VERDICT_MARK[v.verdict]}: {_cell(v.reason)} | "
            f"{_cell(why(v, group.variant, group.cpu) or '—')} |"
        )
    return "\n".join(lines)


def metrics_markdown(group: RunGroup) -> str:
    """Every metric of one group as a Markdown table."""
    lines = ["| metric | better | mean ± 95% CI | n |", "|---|---|---|---|"]
    for key, direction, iv in group.metric_table():
        lines.append(f"| `{key}` | {direction} | {iv.fmt()} | {iv.n} |")
    return "\n".join(lines)


def group_markdown(group: RunGroup, figures: Sequence[Path] = (), rel: Path | None = None) -> str:
    """One experiment's generated section for its docs page."""
    failed = len(group.results) - len(group.ok)
    head = (
        f"### `{group.experiment.name}` ({group.variant} preset, {len(group.ok)} seeds"
        + (f", {failed} failed" if failed else "")
        + f", {group.runtime():.0f} s of compute)"
    )
    parts = [head, "", group.experiment.summary, ""]
    if group.experiment.claims:
        parts += [claims_markdown(group), ""]
    for f in figures:
        target = f.relative_to(rel) if rel else f
        parts += [f"![{f.stem}]({target.as_posix()})", ""]
    parts += [
        "<details><summary>All metrics</summary>",
        "",
        metrics_markdown(group),
        "",
        "</details>",
        "",
    ]
    return "\n".join(parts)


def deviations(slug: str) -> list[tuple[str, str]]:
    """`(file:line, text)` for every `# DEVIATION:` tag in the paper's source folder.

    A tag continues on the comment lines right below it.
    """
    found = []
    for path in sorted((PAPERS_SRC / slug).rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            m = re.search(r"#\s*DEVIATION:\s*(.*)", line)
            if not m:
                continue
            text = m.group(1).strip()
            for cont in lines[i + 1 :]:
                c = cont.strip()
                if not c.startswith("#") or re.match(r"#\s*[A-Z]+:", c):
                    break
                text += " " + c.lstrip("#").strip()
            where = path.relative_to(PAPERS_SRC.parent).as_posix()
            found.append((f"{where}:{i + 1}", text))
    return found


def glossary_markdown(experiments: Sequence[Experiment]) -> str:
    """The logged-metrics glossary of a paper."""
    lines = ["| metric | better | meaning |", "|---|---|---|"]
    for exp in experiments:
        for m in exp.metrics:
            vol = " (wall-clock)" if m.volatile else ""
            lines.append(f"| `{exp.name}`: `{m.pattern}` | {m.direction} | {_cell(m.doc)}{vol} |")
    return "\n".join(lines)


def _cell(text: str) -> str:
    """Text for one Markdown table cell: a pipe would end the cell."""
    return text.replace("|", "\\|")


def _fmt_expected(claim: Claim, preset: str) -> tuple[str, str]:
    """`(verdict, reason)` cells of one claim's expectation at `preset`, each CPU-specific one
    after the plain one ("on avx512: ..."); a missing one reads "not declared"."""
    exp = claim.expected(preset)
    if exp is None:
        return "not declared", "—"
    cells = [(None, exp), *claim.cpu_specific(preset).items()]
    verdict = "; ".join(
        (f"on {cpu}: " if cpu else "") + " or ".join(VERDICT_MARK[v] for v in verdicts)
        for cpu, (verdicts, _) in cells
    )
    reason = "; ".join(
        (f"on {cpu}: " if cpu else "") + (reason.rstrip(".") or "—") for cpu, (_, reason) in cells
    )
    return verdict, _cell(reason)


def _verdicts(claim: Claim, preset: str, cpu: str | None = None) -> frozenset[str]:
    """The verdicts `claim` expects at `preset` on a `cpu` (empty when none is declared)."""
    exp = claim.expected(preset, cpu)
    return frozenset(exp[0]) if exp else frozenset()


def _quick_differs(claim: Claim) -> bool:
    """Whether the quick and full expectations differ on some CPU (or on CPUs in general)."""
    cpus = {None, *claim.cpu_specific("quick"), *claim.cpu_specific("full")}
    return any(_verdicts(claim, "quick", c) != _verdicts(claim, "full", c) for c in cpus)


def quick_vs_full_markdown(experiments: Sequence[Experiment]) -> str:
    """Per experiment, the claims whose expected verdict at quick differs from that at full.

    Read from the claims alone (`Claim.expect`), not from results. Expectations are compared
    as sets of verdicts: a claim that expects "contradicted or inconclusive" at both presets
    agrees with itself whatever the order.
    """
    parts = [
        "### Quick and full presets disagree on",
        "",
        "The claims whose expected verdict at the quick preset (the one `make test` asserts) "
        "differs from the one expected at the full preset (the committed results), with the "
        "reason each claim gives (`Claim.expect`).",
        "",
    ]
    for exp in experiments:
        differ = [c for c in exp.claims if _quick_differs(c)]
        if not differ:
            n = len(exp.claims)
            why = (
                f"its {n} claims expect the same verdict at both"
                if n > 1
                else "its claim expects the same verdict at both"
                if n
                else "no claims"
            )
            parts += [f"`{exp.name}`: none ({why}).", ""]
            continue
        parts += [
            f"`{exp.name}`: {len(differ)} of {len(exp.claims)} claims.",
            "",
            "| claim | quick | why at quick | full | why at full |",
            "|---|---|---|---|---|",
        ]
        for c in differ:
            quick, quick_why = _fmt_expected(c, "quick")
            full, full_why = _fmt_expected(c, "full")
            parts.append(f"| `{c.id}` | {quick} | {quick_why} | {full} | {full_why} |")
        parts.append("")
    return "\n".join(parts)


def _batch_provenance(batch: dict) -> str:
    if batch.get("git_sha") is None:
        return f"unrecorded provenance ({batch.get('note', 'no note')})"
    dirty = " with uncommitted changes" if batch.get("git_dirty") else ""
    load = batch.get("load") or {}
    return (
        f"commit {batch['git_sha'][:7]}{dirty}, load average {load.get('before')} before and "
        f"{load.get('after')} after"
    )


def bench_markdown(bench_dir: Path, slug: str) -> str:
    """The stored benchmark results `benchmarks/results/<slug>*.json` as Markdown tables."""
    parts = []
    for path in sorted(Path(bench_dir).glob(f"{slug}*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data.get("rows", [])
        if not rows:
            continue
        cols = list(dict.fromkeys(k for r in rows for k in r))  # every row's keys, in order
        env = data.get("env", {})
        load = data.get("load")
        load_text = (
            f", load average {load.get('before')} before and {load.get('after')} after"
            if load
            else ", load average not recorded"
        )
        batches = data.get("settings", {}).get("row_batches")
        if batches:  # rows run in several batches (a widened grid): each batch's provenance
            load_text = f"; grid points run in {len(batches)} batch(es): " + "; ".join(
                f"{len(b['points'])} at {_batch_provenance(b)}" for b in batches
            )
        parts += [
            f"`{path.name}`: {data.get('benchmark', path.stem)}; reference: "
            f"{data.get('reference', '-')}; torch {env.get('torch', '?')}, "
            f"{data.get('settings', {}).get('threads', '?')} thread(s), {env.get('machine', '?')} "
            f"with {env.get('cpu_count', '?')} cores{load_text}.",
            "",
            "| " + " | ".join(cols) + " |",
            "|" + "---|" * len(cols),
            *("| " + " | ".join(f"{r[c]}" if c in r else "" for c in cols) + " |" for r in rows),
            "",
        ]
    return "\n".join(parts) or "No stored benchmark results."


def root_bench(docs: Path) -> Path:
    """The stored benchmark results next to the docs folder."""
    return docs.parent / "benchmarks" / "results"


def replace_block(text: str, name: str, body: str) -> str:
    """Replace what lies between `<!-- name:start -->` and `<!-- name:end -->`."""
    pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
    if not pattern.search(text):
        raise ValueError(f"the page has no <!-- {name}:start --> ... <!-- {name}:end --> block")
    return pattern.sub(lambda m: m.group(1) + body.rstrip() + "\n" + m.group(2), text)


def index_markdown(groups: dict[str, RunGroup]) -> str:
    """The verdict table of `docs/index.md`: every claim of every paper with stored results."""
    rows = [
        "| paper | experiment | claim | paper | ours | n | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in registry.experiment_names():
        g = groups.get(name)
        if g is None:
            continue
        slug = g.experiment.slug
        for v in g.verdicts():
            rows.append(
                f"| [{slug}](papers/{slug}.md) | `{name}` | {_cell(v.claim.statement)} | "
                f"{_cell(v.claim.paper_value or '—')} | {_fmt_effect(v)} | {_fmt_n(v)} | "
                f"{VERDICT_MARK[v.verdict]} |"
            )
    return "\n".join(rows)


def _page_markdown(page: Path, slug: str, groups: dict[str, RunGroup], check: bool) -> str:
    docs = page.parent.parent
    exps = registry.get_experiments(slug)
    sections = []
    for exp in exps:
        g = groups.get(exp.name)
        if g is None:
            sections.append(
                f"### `{exp.name}`\n\nNo stored results yet: run "
                f"`iclr25 reproduce --preset full --papers {slug} --out results`.\n"
            )
            continue
        fig_dir = page.parent / "figures"
        figs: list[Path] = []
        if exp.figures:
            # with `check`, draw into a scratch folder: only the names reach the page
            with tempfile.TemporaryDirectory() as scratch:
                drawn = exp.figures(g.ok, Path(scratch) if check else fig_dir)
                figs = [fig_dir / f.name for f in drawn]
        sections.append(group_markdown(g, figs, rel=page.parent))
    devs = deviations(slug)
    dev_md = "\n".join(f"- {t} (`{loc}`)" for loc, t in devs) or "- none recorded"
    text = page.read_text(encoding="utf-8")
    text = replace_block(text, "results", "\n".join(sections))
    text = replace_block(text, "quick_vs_full", quick_vs_full_markdown(exps))
    text = replace_block(text, "deviations", dev_md)
    text = replace_block(text, "metrics", glossary_markdown(exps))
    if "<!-- bench:start -->" in text:
        text = replace_block(text, "bench", bench_markdown(root_bench(docs), slug))
    return text


def papers_markdown() -> str:
    """README's table of papers, from the registry: one row per implemented paper."""
    from iclr25.papers import PAPERS, PLANNED

    lines = [
        f"{len(PAPERS)} of the {len(PLANNED)} planned papers are implemented "
        f"({sum(len(e.experiments) for e in PAPERS.values())} experiments); still to come: "
        + ", ".join(f"`{s}`" for s in PLANNED if s not in PAPERS)
        + ".",
        "",
        "| slug | paper | experiments | docs |",
        "|---|---|---|---|",
    ]
    for slug, entry in PAPERS.items():
        title = registry.get_paper(slug).title
        exps = ", ".join(f"`{e}`" for e in entry.experiments)
        lines.append(
            f"| `{slug}` | {title} | {exps} | [docs/papers/{slug}.md](docs/papers/{slug}.md) |"
        )
    return "\n".join(lines)


def update_docs(
    root: Path, docs: Path, check: bool = False, slugs: Sequence[str] | None = None
) -> list[Path]:
    """Regenerate the generated blocks of each paper page, `docs/index.md`, README's paper table
    and the benchmark block of `docs/lm.md`.

    Args:
        root: The result store (normally `results/`).
        docs: The docs folder (normally `docs/`).
        check: Only report which files would change; write nothing.
        slugs: Papers whose pages to update (default: all registered). The index always
            covers every paper with stored results.

    Returns:
        The files that changed (or would change, with `check`).
    """
    root, docs = Path(root), Path(docs)
    groups = canonical(collect(root))
    changed: list[Path] = []
    targets: dict[Path, str | None] = {docs / "index.md": None}
    readme = docs.parent / "README.md"
    if readme.exists() and "<!-- papers:start -->" in readme.read_text(encoding="utf-8"):
        targets[readme] = "README"
    lm_page = docs / "lm.md"
    if lm_page.exists() and "<!-- bench:start -->" in lm_page.read_text(encoding="utf-8"):
        targets[lm_page] = "LM"
    for slug in slugs or registry.slugs():
        targets[docs / "papers" / f"{slug}.md"] = slug
    for path, slug in targets.items():
        if not path.exists():
            log.warning("no docs page %s", path)
            continue
        old = path.read_text(encoding="utf-8")
        if slug is None:
            new = replace_block(old, "verdicts", index_markdown(groups))
        elif slug == "README":
            new = replace_block(old, "papers", papers_markdown())
        elif slug == "LM":  # core/lm's benchmarks: benchmarks/results/lm*.json
            new = replace_block(old, "bench", bench_markdown(root_bench(docs), "lm"))
        else:
            new = _page_markdown(path, slug, groups, check)
        if new != old:
            changed.append(path)
            if not check:
                atomic_write_text(path, new)
    return changed


# ---------------------------------------------------------------- HTML report

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1200px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.4}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:.88em;width:100%}
td,th{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3} code{font-size:.95em} img{max-width:100%;border:1px solid #eee}
.badge{display:inline-block;padding:.05em .55em;border-radius:.7em;font-weight:600;
font-size:.85em;white-space:nowrap;border:1px solid transparent}
.badge.reproduced{background:#dcf5e3;color:#0b5d22;border-color:#7cc690}
.badge.inconclusive{background:#fff3cd;color:#6b4e00;border-color:#e0c060}
.badge.contradicted{background:#fde2e1;color:#8a1c13;border-color:#e08a84}
.badge.missing{background:#eee;color:#555;border-color:#ccc}
.flag{color:#8a1c13;font-weight:600}
.meta{color:#666;font-size:.85em} dl.legend dt{font-weight:600;margin-top:.4em}
dl.legend dd{margin-left:1.5em} #filter{width:100%;padding:.4em;font-size:1em;margin:.3em 0}
"""

_FILTER_JS = """
document.getElementById('filter').addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase();
  document.querySelectorAll('#claims tbody tr').forEach(function (tr) {
    tr.style.display = tr.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
  });
});
"""

_LEGEND = """<dl class='legend'>
<dt><span class='badge reproduced'>reproduced</span></dt><dd>the 95% Student-t interval of
the mean paired difference (ours minus the control, one difference per seed) lies entirely on
the side the paper claims, and the mean effect reaches the claim's minimum effect; for an
equivalence claim, the interval lies inside the margin.</dd>
<dt><span class='badge inconclusive'>inconclusive</span></dt><dd>the interval crosses zero (or
the margin), or the effect is smaller than the claim's minimum: the seeds cannot tell.</dd>
<dt><span class='badge contradicted'>contradicted</span></dt><dd>the interval lies entirely on
the other side (or outside the margin).</dd>
<dt>n</dt><dd>the number of seeds behind the verdict; "deterministic" marks a quantity that does
not depend on the seed, judged exactly once and shown without an interval.</dd>
<dt>ours</dt><dd>mean ± half-width of the 95% interval over seeds.</dd>
<dt>why</dt><dd>the reason given with the claim for the verdict expected at that preset; a
verdict that is not the expected one is flagged.</dd>
</dl>"""


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _badge(verdict: str) -> str:
    return f"<span class='badge {_e(verdict)}'>{_e(verdict)}</span>"


def _why_html(v: ClaimResult, preset: str, cpu: str | None) -> str:
    text = why(v, preset, cpu)
    if text.startswith("NOT AS EXPECTED"):
        return f"<span class='flag'>{_e(text)}</span>"
    return _e(text)


def _claims_html(
    group: RunGroup, verdicts: list[ClaimResult], published: dict[str, RunGroup]
) -> str:
    pub = published.get(group.experiment.name)
    show_pub = pub is not None and pub.variant != group.variant
    pub_verdicts = {v.claim.id: v for v in pub.verdicts()} if show_pub else {}
    head = (
        "<tr><th>claim</th><th>paper</th><th>ours (mean ± 95% CI)</th>"
        "<th>difference [95% CI]</th><th>n</th><th>verdict</th><th>why</th>"
        + (f"<th>published ({_e(pub.variant)})</th>" if show_pub else "")
        + "</tr>"
    )
    rows = [head]
    for v in verdicts:
        cells = (
            f"<td><b>{_e(v.claim.id)}</b>: {_e(v.claim.statement)}</td>"
            f"<td>{_e(v.claim.paper_value or '—')}</td><td>{_e(_fmt_effect(v))}</td>"
            f"<td>{_e(_fmt_diff(v))}</td><td>{_e(_fmt_n(v))}</td>"
            f"<td>{_badge(v.verdict)}<br><span class='meta'>{_e(v.reason)}</span></td>"
            f"<td>{_why_html(v, group.variant, group.cpu)}</td>"
        )
        if show_pub:
            pv = pub_verdicts.get(v.claim.id)
            differs = pv is not None and pv.verdict != v.verdict
            cells += (
                f"<td>{_badge(pv.verdict) if pv else '—'}"
                + (
                    f"<br><span class='meta'>differs from this run: {_e(_fmt_effect(pv))}, "
                    f"n={_e(_fmt_n(pv))}</span>"
                    if differs
                    else ""
                )
                + "</td>"
            )
        rows.append(f"<tr>{cells}</tr>")
    return "<table>" + "".join(rows) + "</table>"


def _metrics_html(group: RunGroup) -> str:
    rows = ["<tr><th>metric</th><th>better</th><th>mean ± 95% CI</th><th>n</th></tr>"]
    for key, direction, iv in group.metric_table():
        rows.append(
            f"<tr><td><code>{_e(key)}</code></td><td>{_e(direction)}</td>"
            f"<td>{_e(iv.fmt())}</td><td>{iv.n}</td></tr>"
        )
    return "<table>" + "".join(rows) + "</table>"


def _figures_html(group: RunGroup) -> list[str]:
    """The group's figures as <img> tags with the PNG embedded (a data URI)."""
    import base64

    if not (group.experiment.figures and group.ok):
        return []
    with tempfile.TemporaryDirectory() as scratch:
        try:
            paths = group.experiment.figures(group.ok, Path(scratch))
        except ImportError as err:  # matplotlib missing: tables only
            log.warning("no figures: %s", err)
            return []
        return [
            f"<p><img alt='{_e(p.stem)}' src='data:image/png;base64,"
            f"{base64.b64encode(p.read_bytes()).decode()}'></p>"
            for p in paths
        ]


def _summary_html(by_slug: dict[str, list[RunGroup]]) -> str:
    """One row per planned paper: its headline claim, the paper's number, ours, the verdict."""
    from iclr25.papers import PAPERS, PLANNED

    rows = [
        "<tr><th>paper</th><th>headline claim</th><th>paper's number</th><th>ours</th>"
        "<th>n</th><th>verdict</th><th>preset</th></tr>"
    ]
    for slug in PLANNED:
        if slug not in PAPERS:
            rows.append(
                f"<tr><td>{_e(slug)}</td><td colspan='5'>not implemented yet</td>"
                f"<td><span class='badge missing'>missing</span></td></tr>"
            )
            continue
        headline = f"{slug}.{PAPERS[slug].experiments[0]}"
        best = canonical(by_slug.get(slug, [])).get(headline)
        verdicts = best.verdicts() if best else []
        if not verdicts:
            rows.append(
                f"<tr><td>{_e(slug)}</td><td colspan='5'>no results "
                f"for <code>{_e(headline)}</code> in this report</td>"
                f"<td><span class='badge missing'>no results</span></td></tr>"
            )
            continue
        v = verdicts[0]
        rows.append(
            f"<tr><td><a href='#{_e(slug)}'>{_e(slug)}</a></td><td>{_e(v.claim.statement)}</td>"
            f"<td>{_e(v.claim.paper_value or '—')}</td><td>{_e(_fmt_effect(v))}<br>"
            f"<span class='meta'>difference {_e(_fmt_diff(v))}</span></td>"
            f"<td>{_e(_fmt_n(v))}</td><td>{_badge(v.verdict)}</td><td>{_e(best.variant)}</td></tr>"
        )
    return "<table id='summary'>" + "".join(rows) + "</table>"


def build_html(
    root: Path,
    out: Path,
    slugs: Sequence[str] | None = None,
    published: Path | None = None,
) -> Path:
    """Write the HTML report for the results under `root`: one self-contained `index.html`.

    The page opens with one row per planned paper (its headline claim, the paper's number,
    ours, the verdict, the preset), a legend, a filterable table of every claim, then a section
    per paper with its claims (the paper's number beside ours, the expected verdict's reason),
    figures embedded as data URIs, run times and all metrics.

    Args:
        root: The result store to report on.
        out: The folder to write `index.html` into.
        slugs: Papers to include (default: all with results).
        published: A store of published (committed) results; where it holds another preset of
            an experiment, its verdicts are shown beside this run's, with the differences.

    Returns:
        The path of `index.html`.
    """
    root, out = Path(root), Path(out)
    groups = collect(root, slugs)
    pub: dict[str, RunGroup] = {}
    if (
        published is not None
        and Path(published).is_dir()
        and Path(published).resolve() != root.resolve()
    ):
        pub = canonical(collect(Path(published), slugs))
    by_slug: dict[str, list[RunGroup]] = defaultdict(list)
    for g in groups:
        by_slug[g.experiment.slug].append(g)
    claims = []
    body = []
    for slug in registry.slugs():
        if slug not in by_slug:
            continue
        paper = registry.get_paper(slug)
        body.append(
            f"<h2 id='{_e(slug)}'>{_e(slug)}: {_e(paper.title)}</h2>"
            f"<p class='meta'>{_e(paper.authors)}, {_e(paper.venue)}. "
            f"<a href='{_e(paper.url)}'>{_e(paper.url)}</a></p>"
        )
        for g in by_slug[slug]:
            failed = len(g.results) - len(g.ok)
            anchor = f"{g.experiment.name}-{g.variant}"
            body.append(
                f"<h3 id='{_e(anchor)}'>{_e(g.experiment.name)} <span class='meta'>"
                f"[{_e(g.variant)} preset] {len(g.ok)} seeds ok"
                f"{f', {failed} failed' if failed else ''}, {g.runtime():.0f} s of compute "
                "summed over seeds</span></h3>"
                f"<p>{_e(g.experiment.summary)}</p>"
            )
            if g.experiment.claims:
                verdicts = g.verdicts()
                body.append(_claims_html(g, verdicts, pub))
                for v in verdicts:
                    claims.append(
                        f"<tr><td><a href='#{_e(anchor)}'>{_e(g.experiment.name)}</a></td>"
                        f"<td>{_e(g.variant)}</td><td>{_e(v.claim.statement)}</td>"
                        f"<td>{_e(_fmt_n(v))}</td><td>{_badge(v.verdict)}</td></tr>"
                    )
            body.extend(_figures_html(g))
            body.append("<details><summary>All metrics</summary>" + _metrics_html(g) + "</details>")
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>iclr25 report</title><style>{_CSS}</style></head><body>"
        "<h1>iclr25 reproduction report</h1>"
        f"<p class='meta'>Generated {when} from the stored results in <code>{_e(root)}</code>"
        + (f"; published results from <code>{_e(published)}</code>" if pub else "")
        + ". Quick presets are small proxies of the published full ones.</p>"
        "<h2 id='papers'>Which papers reproduce?</h2>"
        + _summary_html(by_slug)
        + "<h2 id='legend'>Reading the verdicts</h2>"
        + _LEGEND
        + "<h2 id='claims-all'>Every claim</h2>"
        "<input id='filter' type='search' placeholder='Filter claims (paper, claim, verdict)'>"
        "<table id='claims'><thead><tr><th>experiment</th><th>preset</th><th>claim</th>"
        "<th>n</th><th>verdict</th></tr></thead><tbody>"
        + "".join(claims)
        + "</tbody></table>"
        + "".join(body)
        + f"<script>{_FILTER_JS}</script></body></html>"
    )
    index = out / "index.html"
    atomic_write_text(index, page)
    return index


def verdict_table(groups: Sequence[RunGroup]) -> list[tuple[str, str, str, str, str, str]]:
    """Rows `(experiment, variant, claim id, ours, n, verdict)` for a terminal table."""
    rows = []
    for g in groups:
        for v in g.verdicts():
            expected = v.claim.expected(g.variant, g.cpu)
            flag = (
                f" (expected {' or '.join(expected[0])})"
                if expected and v.verdict not in expected[0]
                else ""
            )
            rows.append(
                (
                    g.experiment.name,
                    g.variant,
                    v.claim.id,
                    _fmt_effect(v),
                    _fmt_n(v),
                    v.verdict + flag,
                )
            )
    return rows


def _full_history(repo: Path) -> bool:
    """Whether `repo` is inside a git checkout with its whole history (not shallow)."""
    return git(repo, "rev-parse", "--is-shallow-repository") == "false"


def _is_ancestor(repo: Path, sha: str) -> bool:
    return git(repo, "merge-base", "--is-ancestor", sha, "HEAD") is not None


def check_results(root: Path, repo: Path | None = None) -> list[str]:
    """Problems that make the committed results under `root` untrustworthy (empty: none).

    Every result must be "ok", come from a plain preset whose current config it matches, cover
    exactly that preset's default seeds, and have been produced from a clean tree at a commit
    that is an ancestor of HEAD (checked where the history is there: not in a shallow clone or
    an unpacked archive, which a warning says). `repo`: the git checkout (default: `root`'s).
    """
    from iclr25.core.config import to_dict

    root = Path(root)
    repo = Path(repo) if repo is not None else root
    problems: list[str] = []
    known = set(registry.experiment_names())
    ancestors: dict[str, bool] = {}
    history = _full_history(repo)
    if not history:
        log.warning("%s is not in a git checkout with full history: commits not checked", repo)
    for name, variant, folder in iter_run_dirs(root):
        where = f"{folder.relative_to(root).as_posix()}"
        if name not in known:
            problems.append(f"{where}: no registered experiment {name}")
            continue
        exp = registry.get_experiment(name)
        if variant not in exp.presets:
            problems.append(f"{where}: not a plain preset (overridden config)")
            continue
        results = load_results(folder)
        want = to_dict(exp.preset(variant))
        seeds = sorted(r.seed for r in results)
        if seeds != exp.default_seeds(variant):
            problems.append(f"{where}: seeds {seeds}, the preset runs {exp.default_seeds(variant)}")
        for r in results:
            tag = f"{where}/seed={r.seed}"
            if r.status != "ok":
                problems.append(f"{tag}: status {r.status}")
            if r.config != want:
                keys = set(want) | set(r.config)
                diff = sorted(k for k in keys if want.get(k) != r.config.get(k))
                problems.append(f"{tag}: config differs from the current preset in {diff}")
            sha = r.env.get("git_sha")
            if not sha:
                problems.append(f"{tag}: no commit recorded")
            elif history:
                if sha not in ancestors:
                    ancestors[sha] = _is_ancestor(repo, sha)
                if not ancestors[sha]:
                    problems.append(f"{tag}: commit {sha[:10]} is not an ancestor of HEAD")
            if r.env.get("git_dirty") is not False:
                dirty = r.env.get("git_dirty")
                problems.append(f"{tag}: produced from a dirty tree (git_dirty={dirty})")
    return problems
