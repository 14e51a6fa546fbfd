"""The interactive page in a real headless browser (Debian's chromium, driven
by Playwright): it loads without console errors, Next advances exactly one
merge and updates the pair table, and the tokenizer box cuts typed text as
the Python tokenizer does with the same merges. A screenshot is written."""

from __future__ import annotations

import contextlib
import os
import shutil
import warnings

import pytest

import bytepair
from bytepair.tools.viz import page_data, write_page

CORPUS = ["the lowest low lower newer newest widest " * 3, "lower lowest low the new " * 2]


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no chromium on this machine (.ci/run installs Debian's chromium)")


def test_page_data_follows_the_trace():
    data = page_data(CORPUS, 6, pretokenizer="gpt2")
    steps = list(bytepair.trace(CORPUS, merges=6))
    assert [(bytes(s["left"]), bytes(s["right"])) for s in data["steps"]] == [s.pair for s in steps]
    assert data["steps"][0]["top"][0][3] == "winner"
    with pytest.raises(ValueError, match="pre-tokenizers"):
        page_data(CORPUS, 3, pretokenizer="cl100k")


def test_write_page_never_overwrites(tmp_path):
    path = write_page(CORPUS, tmp_path / "page.html", 3)
    assert "<script" in path.read_text(encoding="utf-8") and "http" not in path.read_text()
    with pytest.raises(FileExistsError):
        write_page(CORPUS, path, 3)


def test_the_page_in_a_browser(tmp_path):
    playwright = pytest.importorskip("playwright.sync_api", reason="the page test needs playwright")
    executable = chromium()
    merges = 12
    path = write_page(CORPUS, tmp_path / "page.html", merges, sample="lowest newer")
    expected_tok = bytepair.train(CORPUS, 256 + merges, progress=False)
    steps = list(bytepair.trace(CORPUS, merges=merges, top=12))  # the page shows 12
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        assert page.text_content("#step") == f"merge 1 of {merges}"
        first_row = page.text_content("#pairs tr.winner")
        page.click("#next")
        assert page.text_content("#step") == f"merge 2 of {merges}"
        winner = page.text_content("#pairs tr.winner")
        left, right = steps[1].pair
        assert winner != first_row and winner.startswith(
            f"{bytepair.tools.display.readable(left)} + "
        )
        assert page.locator("#pairs tr").count() == len(steps[1].top_pairs)
        # To the last merge: the box must cut text as the trained tokenizer does.
        page.fill("#slider", str(merges))
        page.dispatch_event("#slider", "input")
        assert page.text_content("#step") == f"merge {merges} of {merges}"
        text = "the lowest newer widest"
        page.fill("#input", text)
        ids = [
            int(i)
            for i in page.locator("#tokens .tok").evaluate_all("e => e.map(x => x.dataset.id)")
        ]
        assert ids == expected_tok.encode_ordinary(text)
        shot = tmp_path / "page.png"
        page.screenshot(path=str(shot), full_page=True)
        if os.environ.get("BYTEPAIR_VIZ_SCREENSHOT"):
            shutil.copy(shot, os.environ["BYTEPAIR_VIZ_SCREENSHOT"])
        browser.close()
    assert shot.read_bytes()[:4] == b"\x89PNG"
    assert errors == []


# Markup in the corpus: "<!--" then "<script" inside the page's data element
# made the HTML parser skip its end tag, and the page was dead.
MARKUP = ["<!--<script> x </script> a&amp;b -->\n" * 30]


def data_element(html: str) -> str:
    start = html.index('<script id="data" type="application/json">')
    start = html.index(">", start) + 1
    return html[start : html.index("</script>", start)]


def test_markup_in_the_corpus_stays_data(tmp_path):
    import json

    path = write_page(MARKUP, tmp_path / "page.html", 40, pretokenizer="whitespace")
    html = path.read_text(encoding="utf-8")
    element = data_element(html)
    assert "<!--<script>" in json.dumps(page_data(MARKUP, 40, pretokenizer="whitespace"))
    assert not any(c in element for c in "<>&")
    assert json.loads(element) == page_data(MARKUP, 40, pretokenizer="whitespace")
    assert html.count("<script") == 2 and html.rstrip().endswith("</html>")


def test_the_sample_is_written_as_given(tmp_path):
    import html
    import json

    sample = '__DATA__ <b>&amp; "x"'
    path = write_page(CORPUS, tmp_path / "page.html", 3, sample=sample)
    text = path.read_text(encoding="utf-8")
    area = text[text.index('<textarea id="input" rows="2">') :].split(">", 1)[1]
    assert html.unescape(area.split("</textarea>")[0]) == sample
    assert json.loads(data_element(text)) == page_data(CORPUS, 3)


@contextlib.contextmanager
def browser_page(path):
    """The page at ``path`` in headless chromium, and the errors it logs."""
    playwright = pytest.importorskip("playwright.sync_api", reason="the page test needs playwright")
    executable = chromium()
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        try:
            yield page, errors
        finally:
            browser.close()


def test_markup_in_the_corpus_in_a_browser(tmp_path):
    path = write_page(MARKUP, tmp_path / "page.html", 40, pretokenizer="whitespace")
    data = page_data(MARKUP, 40, pretokenizer="whitespace")
    merges = len(data["steps"])
    with browser_page(path) as (page, errors):
        assert page.evaluate("document.scripts.length") == 2
        assert page.evaluate("DATA") == data
        assert page.text_content("#step") == f"merge 1 of {merges}"
        page.click("#next")
        assert page.text_content("#step") == f"merge 2 of {merges}"
    assert errors == []


def test_a_page_without_merges(tmp_path):
    """A corpus with no pair: the box cuts its text into bytes when the page
    opens, and the controls (disabled) do nothing, without an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = write_page(["a"], tmp_path / "page.html", 5, sample="abc")
    with browser_page(path) as (page, errors):
        assert page.text_content("#step") == "no merge: the corpus has no pair"
        assert page.text_content("#count") == "3 tokens"
        assert page.locator("#tokens .tok").all_text_contents() == ["abc"[i] for i in range(3)]
        for control in ("prev", "next", "play", "slider"):
            assert page.is_disabled(f"#{control}")
        # Their handlers, called anyway (as a click on an enabled button would).
        page.evaluate(
            "['prev', 'next', 'play'].forEach(id => document.getElementById(id).onclick())"
        )
        page.evaluate("go(2)")
        assert page.text_content("#step") == "no merge: the corpus has no pair"
        assert page.text_content("#play") == "Play"
        page.fill("#input", "ab")
        assert page.text_content("#count") == "2 tokens"
    assert errors == []


def test_viz_command(tmp_path, capsys):
    from bytepair.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text(" ".join(CORPUS), encoding="utf-8")
    page = tmp_path / "page.html"
    assert main(["viz", str(corpus), "-o", str(page), "--merges", "5"]) == 0
    assert "wrote" in capsys.readouterr().out and page.stat().st_size > 1000
    assert main(["viz", str(corpus), "-o", str(page)]) == 1
    assert "--force" in capsys.readouterr().err


def test_viz_output_checked_before_the_work(tmp_path, capsys, monkeypatch):
    """A directory in the output's place fails before the trace (it failed after
    it with --force); a missing directory of -o is an error that names it, and
    is never made."""
    import bytepair.tools.viz
    from bytepair.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text(" ".join(CORPUS), encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"low \xff")
    assert main(["viz", str(bad), "-o", str(tmp_path / "v.html")]) == 1
    assert "not UTF-8" in capsys.readouterr().err
    assert not (tmp_path / "v.html").exists()

    def no_trace(*args, **kwargs):
        raise AssertionError("the trace ran")

    monkeypatch.setattr(bytepair.tools.viz, "page_data", no_trace)
    (tmp_path / "adir").mkdir()
    for output in ("adir", "c.txt/v.html"):
        assert main(["viz", str(corpus), "-o", str(tmp_path / output), "--force"]) == 1
        assert "directory" in capsys.readouterr().err
    with pytest.raises(IsADirectoryError):
        write_page(CORPUS, tmp_path / "adir", overwrite=True)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_page(CORPUS, tmp_path / "nowhere" / "v.html")
    monkeypatch.undo()
    assert main(["viz", str(corpus), "-o", str(tmp_path / "new" / "sub" / "v.html")]) == 1
    assert f"the directory {tmp_path / 'new' / 'sub'} does not exist" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def test_the_page_cuts_text_as_the_pre_tokenizers_do():
    """JS_PATTERNS in node against the core's pre-tokenizers, on every
    whitespace character either engine knows (JavaScript's \\s has U+FEFF and
    lacks U+0085) and on random mixes of letters, digits, marks and spaces."""
    import json
    import random
    import subprocess
    import warnings

    from bytepair.tools.viz import JS_PATTERNS

    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on this machine to run the page's regexes")
    spaces = "\t\n\x0b\x0c\r \x85\xa0\u1680\u180e\u2000\u2005\u200a\u200b\u2028\u2029"
    spaces += "\u202f\u205f\u3000\ufeff"
    texts = [f"{a}{c}{b}" for c in spaces for a in ("a", " ", "!") for b in ("b", c, "")]
    rng = random.Random(7)
    alphabet = "ab Z9٣\u0301!?'s " + spaces
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30))) for _ in range(300)]
    script = (
        "const [patterns, texts] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const out = {};"
        "for (const [name, p] of Object.entries(patterns)) {"
        "  const re = new RegExp(p, 'gu');"
        "  out[name] = texts.map(t => t.match(re) || []);"
        "}"
        "process.stdout.write(JSON.stringify(out));"
    )
    patterns = {name: p for name, p in JS_PATTERNS.items() if p is not None}
    run = subprocess.run(
        [node, "-e", script],
        input=json.dumps([patterns, texts]),
        capture_output=True,
        text=True,
        check=True,
    )
    in_page = json.loads(run.stdout)
    for name in patterns:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no pair to merge: fewer tokens than asked
            tokenizer = bytepair.train(["ab"], 257, pretokenizer=name, progress=False)
        for text, cuts in zip(texts, in_page[name]):
            assert cuts == tokenizer.pretokenize(text), (name, text)
