"""Reports come from stored results only; the committed docs match the committed results."""

import dataclasses
import re
import shutil
from pathlib import Path

from iclr25.core import registry
from iclr25.core.claims import Claim
from iclr25.core.report import (
    bench_markdown,
    build_html,
    quick_vs_full_markdown,
    replace_block,
    update_docs,
)
from iclr25.papers import PLANNED

ROOT = Path(__file__).resolve().parents[2]


def test_committed_docs_are_generated_from_committed_results():
    stale = update_docs(ROOT / "results", ROOT / "docs", check=True)
    assert not stale, f"run `iclr25 report`: stale {stale}"


def test_generated_tables_keep_pipes_inside_their_cells():
    """Claim statements, paper values and reasons hold pipes (|x|, ||G||): every generated table
    row must have as many cell borders as its header, or the page shows broken rows."""
    border = re.compile(r"(?<!\\)\|")
    pages = [ROOT / "docs/index.md", *sorted((ROOT / "docs/papers").glob("*.md"))]
    assert any("\\|" in p.read_text() for p in pages)  # some cell does hold an escaped pipe
    for page in pages:
        header = None
        for n, line in enumerate(page.read_text().splitlines(), 1):
            if not line.startswith("|"):
                header = None
            elif header is None:
                header = len(border.findall(line))
            else:
                assert len(border.findall(line)) == header, f"{page.name}:{n}: {line[:80]}"


def test_html_report_is_self_contained(tmp_path):
    index = build_html(ROOT / "results", tmp_path / "report", ["mgda"])
    html = index.read_text()
    assert "mgda.toy" in html and "<table" in html and "Which papers reproduce?" in html
    assert sorted(p.name for p in index.parent.iterdir()) == ["index.html"]  # nothing beside it
    assert "src='data:image/png;base64," in html and "src='figures" not in html
    for verdict in ("reproduced", "inconclusive", "contradicted"):
        assert f"<span class='badge {verdict}'>{verdict}</span>" in html  # legend: words + CSS
    assert not any(ch in html for ch in "✅❔❌")  # no glyph that needs an emoji font
    for slug in PLANNED:
        assert f"<td>{slug}</td>" in html or f"href='#{slug}'>{slug}</a>" in html


def test_update_docs_fills_the_blocks_of_a_page(tmp_path):
    docs = tmp_path / "docs"
    (docs / "papers").mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "index.md", docs / "index.md")
    page = docs / "papers" / "mgda.md"
    text = (ROOT / "docs" / "papers" / "mgda.md").read_text()
    for block in ("results", "quick_vs_full", "deviations", "metrics", "bench"):
        text = replace_block(text, block, "")
    page.write_text(text)
    changed = update_docs(ROOT / "results", docs, slugs=["mgda"])
    assert page in changed
    new = page.read_text()
    assert "constant_step_converges" in new
    assert "papers/mgda/method.py" in new  # a deviation with its location
    assert "### Quick and full presets disagree on" in new and "`mgda.lstm_mtl`: none" in new
    assert (docs / "papers" / "figures" / "mgda-toy-alpha_max.png").is_file()
    assert update_docs(ROOT / "results", docs, slugs=["mgda"], check=True) == []


def _claim(id_: str, expect: dict) -> Claim:
    return Claim(id_, "s", "m", "a", "b", expect=expect)


def test_quick_vs_full_lists_the_claims_whose_expectations_differ_with_both_reasons():
    exp = registry.get_experiment("mgda.toy")
    claims = (
        _claim("differs", {"quick": ("inconclusive", "3 seeds | too few"), "full": "reproduced"}),
        _claim("agrees", {"quick": "reproduced", "full": "reproduced"}),
        _claim(
            "either_at_both",  # the same two verdicts in another order: no disagreement
            {
                "quick": (("contradicted", "inconclusive"), "timing noise"),
                "full": (("inconclusive", "contradicted"), "timing noise again"),
            },
        ),
        _claim(
            "flips",
            {"quick": ("contradicted", "small model"), "full": ("inconclusive", "wide interval")},
        ),
    )
    other = dataclasses.replace(exp, name="mgda.other", claims=claims[1:3])
    md = quick_vs_full_markdown([dataclasses.replace(exp, claims=claims), other])
    assert md.startswith("### Quick and full presets disagree on")
    assert "`mgda.toy`: 2 of 4 claims." in md
    assert "| `differs` | ❔ inconclusive | 3 seeds \\| too few | ✅ reproduced | — |" in md
    assert "| `flips` | ❌ contradicted | small model | ❔ inconclusive | wide interval |" in md
    assert "`agrees`" not in md and "`either_at_both`" not in md and "timing noise" not in md
    assert "`mgda.other`: none (its 2 claims expect the same verdict at both)." in md


def test_quick_vs_full_shows_cpu_specific_expectations_after_the_plain_one():
    exp = registry.get_experiment("mgda.toy")
    claims = (
        _claim(  # equal on CPUs in general, differs on avx512
            "on_avx512",
            {
                "quick": ("inconclusive", "one seed rises by 0.025"),
                "quick@avx512": ("reproduced", "rounding"),
                "full": ("inconclusive", "wide"),
            },
        ),
        _claim("same", {"quick": "reproduced", "full": "reproduced"}),
    )
    md = quick_vs_full_markdown([dataclasses.replace(exp, claims=claims)])
    assert "`mgda.toy`: 1 of 2 claims." in md
    assert (
        "| `on_avx512` | ❔ inconclusive; on avx512: ✅ reproduced | one seed rises by 0.025"
        "; on avx512: rounding | ❔ inconclusive | wide |"
    ) in md


def test_quick_vs_full_block_is_idempotent_and_checked(tmp_path):
    docs = tmp_path / "docs"
    (docs / "papers").mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "index.md", docs / "index.md")
    page = docs / "papers" / "mgda.md"
    page.write_text(
        replace_block((ROOT / "docs" / "papers" / "mgda.md").read_text(), "quick_vs_full", "")
    )
    assert update_docs(ROOT / "results", docs, slugs=["mgda"]) == [page]
    filled = page.read_text()
    assert "| `alpha_max_scaling` | ❔ inconclusive |" in filled  # from the claims alone
    assert update_docs(ROOT / "results", docs, slugs=["mgda"]) == []  # idempotent
    assert page.read_text() == filled
    stale = replace_block(filled, "quick_vs_full", "### Quick and full presets disagree on\n\nold")
    page.write_text(stale)
    assert update_docs(ROOT / "results", docs, slugs=["mgda"], check=True) == [page]
    assert page.read_text() == stale  # --check writes nothing
    assert update_docs(ROOT / "results", docs, slugs=["mgda"]) == [page]
    assert page.read_text() == filled


def test_quick_vs_full_block_needs_no_results(tmp_path):
    docs = tmp_path / "docs"
    (docs / "papers").mkdir(parents=True)
    (docs / "index.md").write_text("<!-- verdicts:start -->\n<!-- verdicts:end -->\n")
    page = docs / "papers" / "mgda.md"
    page.write_text(
        replace_block((ROOT / "docs" / "papers" / "mgda.md").read_text(), "quick_vs_full", "")
    )
    empty = tmp_path / "results"
    empty.mkdir()
    update_docs(empty, docs, slugs=["mgda"])
    text = page.read_text()
    assert "No stored results yet" in text and "| `warm_start_tracks` | ❔ inconclusive |" in text


def test_update_docs_fills_the_lm_benchmark_block(tmp_path):
    docs, bench = tmp_path / "docs", tmp_path / "benchmarks" / "results"
    docs.mkdir()
    bench.mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "index.md", docs / "index.md")
    (docs / "lm.md").write_text("# lm\n\n<!-- bench:start -->\n<!-- bench:end -->\n")
    row = '{"benchmark": "lm_backends", "settings": {"threads": 2}, "rows": [{"cell": "x"}]}'
    (bench / "lm.json").write_text(row)
    (bench / "mgda.json").write_text(row.replace("lm_backends", "not_lm"))
    assert docs / "lm.md" in update_docs(ROOT / "results", docs, slugs=["mgda"])
    text = (docs / "lm.md").read_text()
    assert "`lm.json`: lm_backends" in text and "not_lm" not in text


def test_check_results_names_each_untrustworthy_result(tmp_path, caplog):
    import json

    from iclr25.core.report import check_results

    src = ROOT / "results" / "ilp_orbit" / "prop1" / "full"
    folder = tmp_path / "ilp_orbit" / "prop1" / "full"
    shutil.copytree(src, folder)
    assert check_results(tmp_path, repo=ROOT) == []  # committed: clean, on main, current preset

    def edit(seed, change):
        path = folder / f"seed={seed}.json"
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))

    edit(1, lambda d: d["env"].update(git_dirty=True))
    edit(2, lambda d: d["env"].update(git_sha="0" * 40))
    edit(3, lambda d: d["config"].update(n_models=d["config"]["n_models"] + 1))
    (folder / "seed=4.json").unlink()
    problems = check_results(tmp_path, repo=ROOT)
    assert any("seed=1: produced from a dirty tree" in p for p in problems)
    assert any("seed=2: commit 0000000000 is not an ancestor of HEAD" in p for p in problems)
    assert any("seed=3: config differs from the current preset in" in p for p in problems)
    assert any("full: seeds [0, 1, 2, 3, 5, 6, 7, 8, 9], the preset runs" in p for p in problems)
    assert len(problems) == 4
    # outside a git checkout (an unpacked archive) commits cannot be checked: said, not failed
    no_git = check_results(tmp_path, repo=tmp_path)
    assert not any("ancestor" in p for p in no_git) and len(no_git) == 3
    assert "commits not checked" in caplog.text


def test_bench_block_gives_each_batch_its_own_provenance(tmp_path):
    """A grid widened in batches says, per batch, the commit and load its rows ran at; the
    file's top-level load (that of the last rewrite) is not shown as theirs."""
    import json

    batches = [
        {"points": ["a", "b"], "git_sha": None, "git_dirty": None, "load": None, "note": "old"},
        {
            "points": ["c"],
            "git_sha": "0123456789",
            "git_dirty": True,
            "load": {"before": 0.1, "after": 1.9},
        },
    ]
    data = {
        "benchmark": "g",
        "settings": {"threads": 1, "row_batches": batches},
        "rows": [{"x": 1}],
    }
    data["load"] = {"before": 3.0, "after": 3.0}
    (tmp_path / "p_grid.json").write_text(json.dumps(data))
    text = bench_markdown(tmp_path, "p")
    assert "2 batch(es): 2 at unrecorded provenance (old); 1 at commit 0123456 with " in text
    assert "load average 0.1 before and 1.9 after" in text and "3.0" not in text
