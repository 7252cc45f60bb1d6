"""The base of every typed output document: frozen, strict about unknown keys, JSON-ready.

Documents are the machine-readable contracts of wattgpu's outputs (plan, report, forecast,
Pareto front). Field order is the JSON key order; new keys are only ever added at the end of
an object, so files written by an older version still load. Their JSON Schemas are committed
under docs/schemas/ (:func:`planner.documents.schema`).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Collection, Sequence
from dataclasses import fields
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from planner.documents.json_values import OUTDATED_LEAD, long_integer_field, non_finite_field
from predictors.core.document_kinds import check_kind
from predictors.core.errors import WattgpuError
from predictors.core.safe_read import MAX_PLAN_JSON_BYTES, decode_utf8, load_json, read_bytes

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

D = TypeVar("D", bound="Document")
E = TypeVar("E", bound=Enum)
#: Most problems of a read document (:meth:`Document.saved_problems`) printed before the rest
#: are counted.
MAX_SHOWN = 12


class Document(BaseModel):
    """A frozen pydantic model with no unknown keys."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    def to_json_dict(self) -> dict[str, Any]:
        """The document as plain JSON values (non-finite floats stay; ``to_json`` nulls them)."""
        return self.model_dump(mode="json")

    def saved_problems(self) -> list[str]:
        """What a document read from a file (:func:`load_document`) cannot be that its fields'
        types do not say, one line per field (figures that disagree with the records they
        summarise); none unless a document says otherwise."""
        return []


def enum_from_json(kind: type[E]) -> BeforeValidator:
    """The validator of an enum field read from its JSON value: a document read in pydantic's
    strict mode (:func:`load_document`) takes an enum's instances only, so a JSON string is
    made the member first; an unknown one lists the known values, as lax mode does."""

    def member(value: Any) -> Any:
        if type(value) is not str:
            return value
        try:
            return kind(value)
        except ValueError:
            known = [repr(e.value) for e in kind]
            expected = f"{', '.join(known[:-1])} or {known[-1]}"
            raise PydanticCustomError(
                "enum", "Input should be {expected}", {"expected": expected}
            ) from None

    return BeforeValidator(member)


#: pydantic's words for a JSON container, in the file's terms.
_JSON_WORDS = (
    (re.compile(r"a valid dictionary or instance of \w+"), "a JSON object"),
    (re.compile(r"a valid dictionary"), "a JSON object"),
    (re.compile(r"a valid list"), "a JSON array"),
)


def field_path(loc: Sequence[int | str]) -> str:
    """A validation error's location as the plan checks name fields: ``allocations[0].gpu``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "(top level)"


def first_error(exc: ValidationError) -> str:
    """'field[0].path: message' of the first validation error; a JSON literal, number or null
    that is not of the field's type is shown as the file has it (``…: Input should be a valid
    integer, got true``), and a container by its JSON name (``a JSON object``)."""
    err = exc.errors()[0]
    value = err.get("input")
    got = ""
    if err["type"].endswith("_type") and (value is None or isinstance(value, bool | int | float)):
        got = f", got {json.dumps(value)}"
    elif err["type"].endswith("_type") and isinstance(value, str):
        shown = json.dumps(value if len(value) <= 40 else value[:40] + "…", ensure_ascii=False)
        got = f", got the text {shown}"
    msg = str(err["msg"])
    for pattern, words in _JSON_WORDS:
        msg = pattern.sub(words, msg)
    return f"{field_path(err['loc'])}: {msg}{got}"


def load_document(
    path: Path, model: type[D], what: str, fix: str, *, strict: bool = False, kind: str = ""
) -> D:
    """Read and validate the JSON file *path* as *model*; one clear line on any problem. With
    *strict* every field takes its own JSON type only (pydantic's strict mode): ``true`` is no
    integer or number, ``2.0`` no integer, ``1`` no boolean (lax mode reads ``"replicas": true``
    as 1); an integer still reads as a number. A number beyond a float's range (``1e400``,
    which parses as infinity) is an unusable number naming its field; what the document's
    types cannot say (:meth:`Document.saved_problems`) one line per field after validation.
    With *kind* (:data:`predictors.core.document_kinds.KINDS`), a document that fails to validate
    and is another of wattgpu's files is named by what it is
    (:class:`~predictors.core.document_kinds.WrongDocument`)."""
    try:  # size, UTF-8, nesting depth and NaN are checked before anything is parsed
        data = load_json(path, MAX_PLAN_JSON_BYTES)
    except WattgpuError as exc:
        raise WattgpuError(f"{_long_integer(path) or exc}; {fix}") from None
    if not isinstance(data, dict):
        raise WattgpuError(f"{path}: not a {what} (expected a JSON object); {fix}")
    field = non_finite_field(data)
    if field is not None:  # a literal beyond a float's range (1e400) parses as infinity
        raise WattgpuError(
            f"{path}: unusable number in JSON ({field}: beyond a float's range) — give finite "
            f"numbers; {fix}"
        )
    try:
        doc = model.model_validate(data, strict=strict)
    except ValidationError as exc:
        if kind:  # another of wattgpu's files: say which (predictors.core.document_kinds)
            check_kind(data, path, kind, what, fix)
        raise WattgpuError(f"{path}: not a valid {what}: {first_error(exc)}; {fix}") from None
    problems = doc.saved_problems()
    if problems:
        shown = [f"{path}: {p}" for p in problems[:MAX_SHOWN]]
        if len(problems) > MAX_SHOWN:
            shown.append(f"{path}: … and {len(problems) - MAX_SHOWN} more")
        if all(p.split(": ", 1)[-1].startswith(OUTDATED_LEAD) for p in problems):
            shown[-1] += f" — make the {what} again with this version; {fix}"
        else:
            shown[-1] += f" — the {what} was edited or damaged; {fix}"
        raise WattgpuError("\n".join(shown))
    return doc


def _long_integer(path: Path) -> str | None:
    """The error of a JSON file whose whole number has too many digits for Python to read,
    naming its field (as a number beyond a float's range is named); None when none has."""
    try:
        found = long_integer_field(decode_utf8(read_bytes(path, MAX_PLAN_JSON_BYTES), path))
    except WattgpuError:
        return None
    if found is None:
        return None
    field, digits = found
    return (
        f"{path}: unusable number in JSON ({field}: a number of {digits:,} digits is beyond "
        f"range) — give finite numbers of at most {sys.get_int_max_str_digits():,} digits"
    )


def dataclass_values(obj: DataclassInstance, *, skip: Collection[str] = ()) -> dict[str, Any]:
    """The fields of the dataclass instance *obj* by name (but *skip*), to build the document
    of the same fields from it."""
    return {f.name: getattr(obj, f.name) for f in fields(obj) if f.name not in skip}
