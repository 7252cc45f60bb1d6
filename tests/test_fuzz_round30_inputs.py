"""Fuzz round 30 (environments, encodings and terminals), findings 4–7: the inputs.

* F4: model entry names that look the same were two entries (two plan rows no reader could tell
  apart): ``café`` typed as one character (NFC) and as ``e`` plus a combining accent (NFD),
  ``chat 8b`` against ``chat\\u00a08b`` (no-break space), ``chat-8b`` against
  ``chat-8b\\u200b`` (zero-width space). Names equal once NFC-normalised are the duplicate
  error an exact repeat gets; a name (``models[i].name``, a ``regions`` key) holding an
  invisible format character (Cf) or a space other than U+0020 is refused naming the field and
  the character. Names are never rewritten.
* F5: an unknown ``region``, ``model`` or GPU echoed its value at any length (a 7 MB error
  "line") and searched a did-you-mean for it (seconds); the value is shortened and no
  did-you-mean is searched for one over 200 characters.
* F6: a UTF-16 scenario without a byte-order mark was a "YAML syntax error … fix the YAML"; it
  is named as UTF-16, as the predict CSV reader names it.
* F7: a ``predict --input`` model or gpu cell of control characters alone (a lone NUL) read
  ``model: unknown llm '�'``; it gets the documented ``holds a control character (U+0000)``,
  every other row's output unchanged.
"""

from __future__ import annotations

import csv
import difflib
import io
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from planner.scenario.load import load_scenario
from tests.cli_runner import Result, one_error_line, run_cli

EXAMPLE = "paper-llama8b-low-load"
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
SCENARIO = """\
name: names
region: US
electricity_usd_per_kwh: 0.12
gpus: {L4: {}, A30: {}}
models:
"""
ENTRY = """\
  - name: "{name}"
    model: meta-llama/Llama-3.1-8B-Instruct
    load: {{requests_per_s: 0.33, input_tokens: 1024, output_tokens: 256}}
    sla: {{itl_ms: 100}}
"""


def _scenario(tmp_path: Path, *names: str) -> Path:
    path = tmp_path / "s.yaml"
    text = SCENARIO + "".join(ENTRY.format(name=n) for n in names)
    path.write_text(text, encoding="utf-8")
    return path


def _errors(result: Result) -> list[str]:
    assert result.code == 1, (result.code, result.out, result.err)
    assert "Traceback" not in result.err and "internal error" not in result.err, result.err
    return [line.split(": ", 2)[2] for line in result.errors]


# --- F4: names that look the same ---------------------------------------------------------------

CAFE_NFC = unicodedata.normalize("NFC", "café")
CAFE_NFD = unicodedata.normalize("NFD", "café")


def test_names_equal_once_nfc_normalised_are_one_name_twice(tmp_path: Path) -> None:
    assert CAFE_NFC != CAFE_NFD
    lines = _errors(run_cli("validate", str(_scenario(tmp_path, CAFE_NFC, "chat", CAFE_NFD))))
    assert lines == [
        f"models[2].name: '{CAFE_NFD}' already used by models[0] (the same text in another "
        "Unicode form) — give every entry a unique name"
    ]


def test_an_exact_repeat_keeps_its_message(tmp_path: Path) -> None:
    lines = _errors(run_cli("validate", str(_scenario(tmp_path, "chat", "chat"))))
    assert lines == [
        "models[1].name: 'chat' already used by models[0] — give every entry a unique name"
    ]


def test_an_nfd_name_alone_is_accepted_and_kept_as_written(tmp_path: Path) -> None:
    path = _scenario(tmp_path, CAFE_NFD, "chat")
    assert run_cli("validate", str(path)).code == 0
    assert [m.name for m in load_scenario(path).models] == [CAFE_NFD, "chat"]  # not normalised


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("chat\\u00a08b", "a non-ASCII space (U+00A0) — use a plain space"),
        ("chat\\u20098b", "a non-ASCII space (U+2009) — use a plain space"),
        ("chat\\u30008b", "a non-ASCII space (U+3000) — use a plain space"),
        ("chat-8b\\u200b", "an invisible format character (U+200B) — remove it"),
        ("chat\\u00ad8b", "an invisible format character (U+00AD) — remove it"),
        ("\\ufeffchat", "an invisible format character (U+FEFF) — remove it"),
        ("chat\\u2060", "an invisible format character (U+2060) — remove it"),
        ("chat\\u2028x", "a line separator (U+2028) — remove it"),
    ],
    ids=["nbsp", "thin", "ideographic", "zwsp", "soft_hyphen", "bom", "word_joiner", "line_sep"],
)
def test_an_invisible_or_non_ascii_space_in_an_entry_name_is_refused(
    tmp_path: Path, name: str, words: str
) -> None:
    # "chat 8b" beside it: the no-break space made a second entry that reads the same
    lines = _errors(run_cli("validate", str(_scenario(tmp_path, "chat 8b", name))))
    assert len(lines) == 1, lines
    assert lines[0].startswith("models[1].name: text '"), lines
    assert lines[0].endswith(f" holds {words}"), lines


def test_an_invisible_character_in_a_region_key_is_refused() -> None:
    result = run_cli(
        "validate",
        EXAMPLE,
        "--set",
        'regions={eu: {region: DE}, "us\\u200b": {region: US}}',
        "--set",
        "models[0].regions=[eu]",
    )
    one_error_line(
        result,
        ": regions: key text 'us\\u200b' holds an invisible format character (U+200B) — remove it",
    )


def test_non_ascii_letters_and_plain_spaces_stay_allowed(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "chat 8b", "Überblick ×2 → µs", "чат", "聊天")
    assert run_cli("validate", str(path)).code == 0


# --- F5: a huge unknown value -------------------------------------------------------------------

HUGE = 100_000


@pytest.fixture
def no_long_did_you_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a did-you-mean searched for a value longer than any catalog name."""
    real: Callable[..., Any] = difflib.get_close_matches

    def guarded(word: Any, *args: Any, **kwargs: Any) -> Any:
        assert len(word) <= 200, f"did-you-mean searched for {len(word)} characters"
        return real(word, *args, **kwargs)

    monkeypatch.setattr(difflib, "get_close_matches", guarded)


def _short_line(result: Result, *parts: str) -> str:
    line = one_error_line(result, *parts)
    assert len(line) < 500, len(line)
    assert "…" in line or "..." in line, line
    return line


@pytest.mark.usefixtures("no_long_did_you_mean")
@pytest.mark.parametrize(
    ("setting", "words"),
    [
        (f"region={'R' * HUGE}", "region: unknown region 'RRRR"),
        (f"models[0].model={'m' * HUGE}", "models[0].model: unknown model 'mmmm"),
    ],
    ids=["region", "model"],
)
def test_a_huge_unknown_scenario_name_is_shortened(setting: str, words: str) -> None:
    _short_line(run_cli("validate", EXAMPLE, "--set", setting), words)


@pytest.mark.usefixtures("no_long_did_you_mean")
def test_a_huge_unknown_region_of_an_entry_is_shortened() -> None:
    result = run_cli(
        "validate",
        EXAMPLE,
        "--set",
        "regions={eu: {region: DE}}",
        "--set",
        f"models[0].regions=[{'x' * HUGE}]",
    )
    line = _short_line(result, "models[0].regions[0]: unknown region 'xxxx")
    assert line.endswith("— use a name listed under regions (eu)"), line


@pytest.mark.usefixtures("cached_predictor", "no_long_did_you_mean")
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--model", "m" * HUGE, "--gpu", "A30"), "unknown llm 'mmmm"),
        (("--model", LLAMA, "--gpu", "G" * HUGE), "unknown gpu 'GGGG"),
    ],
    ids=["model", "gpu"],
)
def test_a_huge_unknown_predict_name_is_shortened(args: tuple[str, ...], words: str) -> None:
    _short_line(run_cli("predict", *args), words)


def test_a_short_unknown_name_keeps_its_did_you_mean() -> None:
    line = one_error_line(run_cli("validate", EXAMPLE, "--set", "region=Germny"))
    assert "unknown region 'Germny' (did you mean: Germany" in line, line


# --- F6: a UTF-16 scenario without a byte-order mark --------------------------------------------


def _example_text() -> str:
    source = Path(__file__).resolve().parents[1] / "scenarios" / f"{EXAMPLE}.yaml"
    return source.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("encoding", "words"),
    [
        ("utf-16-le", "is UTF-16 text (little-endian, no byte-order mark) — save it as UTF-8"),
        ("utf-16-be", "is UTF-16 text (big-endian, no byte-order mark) — save it as UTF-8"),
        ("utf-32-le", "is UTF-32 text (little-endian, no byte-order mark) — save it as UTF-8"),
        ("utf-16", "is UTF-16 text (byte-order mark FF FE) — save it as UTF-8"),
    ],
)
def test_a_wide_scenario_is_named_as_such(tmp_path: Path, encoding: str, words: str) -> None:
    path = tmp_path / "wide.yaml"
    path.write_bytes(_example_text().encode(encoding))
    line = one_error_line(run_cli("validate", str(path)), f"{path}: {words}", never=("YAML",))
    assert line == f"error: {path}: {words}"


def test_a_wide_overlay_is_named_as_such(tmp_path: Path) -> None:
    overlay = tmp_path / "more.yaml"
    overlay.write_bytes("horizon_hours: 100\n".encode("utf-16-le"))
    one_error_line(
        run_cli("validate", EXAMPLE, "--overlay", str(overlay)),
        f"{overlay}: is UTF-16 text (little-endian, no byte-order mark) — save it as UTF-8",
        never=("YAML",),
    )


# --- F7: a model or gpu cell of control characters alone ----------------------------------------


def _predicted(tmp_path: Path, text: str, name: str) -> tuple[list[dict[str, str]], list[str]]:
    rows, out = tmp_path / f"{name}.csv", tmp_path / f"{name}.out.csv"
    rows.write_text(text, encoding="utf-8", newline="")
    result = run_cli("predict", "--input", str(rows), "--output", str(out))
    assert result.code == 0, result.err
    raw = out.read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(raw, newline=""))), raw.splitlines()


@pytest.mark.usefixtures("cached_predictor")
def test_a_cell_of_control_characters_alone_gets_the_control_error(tmp_path: Path) -> None:
    header = "model,gpu,batch_size,note\n"
    good = [f"{LLAMA},A30,4,first\n", f"{LLAMA},L4,2,second\n"]
    bad = [
        "\x00,A30,4,x\n",
        f"{LLAMA},\x00,4,x\n",
        "\x00\x00,A30,4,x\n",
        " \x01 ,A30,4,x\n",
        "\x85,A30,4,x\n",  # NEL: also a space to a strip
        "\x00,A30,abc,x\n",  # another error of the row is kept
        "\x00,\x1b,4,x\n",
        "nope,\x00,4,x\n",  # an unknown model beside it is still named
    ]
    out, lines = _predicted(tmp_path, header + good[0] + "".join(bad) + good[1], "mixed")
    errors = [row["error"] for row in out[1:-1]]
    assert errors[:5] == [
        "model: holds a control character (U+0000)",
        "gpu: holds a control character (U+0000)",
        "model: holds a control character (U+0000)",
        "model: holds a control character (U+0001)",
        "model: holds a control character (U+0085)",
    ]
    assert errors[5] == (
        "batch_size: must be a whole number from 1 to 65,536 (got 'abc'); "
        "model: holds a control character (U+0000)"
    )
    assert errors[6] == (
        "model: holds a control character (U+0000); gpu: holds a control character (U+001B)"
    )
    assert errors[7].startswith("model: unknown llm 'nope'"), errors[7]
    assert errors[7].endswith("; gpu: holds a control character (U+0000)"), errors[7]
    assert all("unknown gpu" not in e for e in errors), errors
    # the good rows are written as they are without the bad ones
    _, alone = _predicted(tmp_path, header + "".join(good), "good")
    assert [lines[0], lines[1], lines[-1]] == alone


@pytest.mark.usefixtures("cached_predictor")
def test_a_name_beside_a_control_character_keeps_its_did_you_mean(tmp_path: Path) -> None:
    out, _ = _predicted(tmp_path, f"model,gpu\n{LLAMA},H2OO\x01\n", "near")
    error = out[0]["error"]
    assert "gpu: unknown gpu 'H2OO\\x01' (did you mean: H20, H200-SXM-141GB" in error, error
    assert error.endswith("gpu: holds a control character (U+0001)"), error
