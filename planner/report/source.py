"""What a report or a Pareto front starts from: a scenario file (planned now) or a saved plan.

``wattgpu report`` and ``wattgpu pareto`` accept either a scenario YAML (loaded, predicted and
solved with the predictors of ``--models``, ``$WATTGPU_MODELS`` or the shipped ones) or a plan
JSON written by ``wattgpu plan --format json`` (validated; no scenario, no predictor). Either way
the result is the plan's document, the model card that describes its predictors, and the
optimiser's inputs for re-solving (the fresh inputs, or the inputs rebuilt from the saved plan's
candidates).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from planner.documents.plan import PlanDocument, load_plan, plan_document, planning_inputs_of
from planner.inputs import PlanningInputs
from predictors.core.document_kinds import PLAN, SCENARIO, WrongDocument, document_kind
from predictors.core.errors import WattgpuError
from predictors.core.safe_read import MAX_PLAN_JSON_BYTES
from predictors.estimators.card import ModelCard, card_of, load_card

if TYPE_CHECKING:
    from predictors.api import Predictor
    from predictors.catalog.store import Catalog


@dataclass(frozen=True)
class PlanSource:
    """A plan ready to report: its document, the model card and the optimiser's inputs."""

    plan: PlanDocument
    card: ModelCard
    inputs: PlanningInputs
    saved: bool
    """True when the plan was read from a plan JSON (nothing was predicted or solved)."""
    catalog: Catalog | None = None
    """The catalog the scenario was planned against (its ``user_catalog`` overlay included), or
    a saved plan's (:func:`saved_catalog`); None: the bundled catalogs plus
    ``$WATTGPU_USER_CATALOG``."""


def is_plan_json(path: Path) -> bool:
    """A ``.json`` file is a saved plan, and so is any other file whose text is a plan JSON (a
    plan saved as ``plan.yaml``); anything else a scenario. A ``.json`` file that is a scenario
    is found when it fails to load as a plan (:func:`plan_source`)."""
    return path.suffix.lower() == ".json" or _holds_plan(path)


def _holds_plan(path: Path) -> bool:
    """Whether *path* (not named ``.json``) holds a JSON object with a saved plan's keys; read
    only when it starts like one (a scenario YAML is read twice, a few kB)."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_PLAN_JSON_BYTES:
            return False
        text = path.read_text(encoding="utf-8")
        if not text.lstrip().startswith("{"):
            return False
        found = document_kind(json.loads(text))
    except (OSError, UnicodeError, ValueError, RecursionError):
        return False  # the scenario loader says what is wrong with it
    return found is not None and found[0] == PLAN


def plan_source(
    path: Path,
    overrides: Sequence[str] = (),
    overlays: Sequence[Path] = (),
    *,
    model_card: Path | None = None,
    time_limit_s: float | None = None,
    progress: Callable[[str], None] | None = None,
    trust: bool = False,
    warn: Callable[[str], None] | None = None,
    flags: bool = False,
    predictor: Predictor | None = None,
    user_catalog: Path | None = None,
) -> PlanSource:
    """Load the saved plan at *path* (recomputed and checked: *trust* turns its problems into
    warnings through *warn*), or plan the scenario at *path* (with what-if options; *flags*:
    with its uncertainty flags, :func:`planner.analysis.flags.uncertainty_flags`). *predictor*
    (default: ``$WATTGPU_MODELS`` or the shipped one) plans the scenario; its card describes a
    saved plan unless *model_card* is given. *user_catalog* (``--user-catalog``): the user
    catalog of a saved plan, instead of the one it records."""
    doc = _saved(path, trust, warn) if is_plan_json(path) else None
    if user_catalog is not None and doc is None:
        raise WattgpuError(
            f"--user-catalog {user_catalog}: applies to a saved plan; a scenario names its own "
            "(user_catalog: DIR in the scenario file)"
        )
    if doc is not None:
        if overrides or overlays:
            raise WattgpuError(
                f"{path}: --set/--overlay change a scenario; a saved plan is reported as it "
                "was planned (give the scenario YAML to plan a what-if)"
            )
        inputs = planning_inputs_of(doc, time_limit_s=time_limit_s)
        catalog = saved_catalog(path, doc, user_catalog, warn)
        if model_card is None and predictor is not None:
            return PlanSource(doc, card_of(predictor.card), inputs, saved=True, catalog=catalog)
        return PlanSource(doc, load_card(model_card), inputs, saved=True, catalog=catalog)
    from planner.analysis.flags import uncertainty_flags
    from planner.pipeline import plan_file

    run = plan_file(
        path,
        overrides,
        overlays,
        time_limit_s=time_limit_s,
        predictor=predictor,
        progress=progress,
    )
    card = load_card(model_card) if model_card is not None else card_of(run.predictor_card)
    found = uncertainty_flags(run, progress=progress) if flags else None
    doc = plan_document(run.plan, flags=found)
    return PlanSource(doc, card, run.inputs, saved=False, catalog=run.predictor.catalog)


def _saved(path: Path, trust: bool, warn: Callable[[str], None] | None) -> PlanDocument | None:
    """The saved plan at *path*; None when it is a scenario written as JSON (planned instead,
    as ``plan`` and ``validate`` read it)."""
    try:
        return load_plan(path, trust=trust, warn=warn)
    except WrongDocument as exc:
        if exc.kind == SCENARIO:
            return None
        raise


def saved_catalog(
    path: Path,
    doc: PlanDocument,
    given: Path | None,
    warn: Callable[[str], None] | None = None,
) -> Catalog:
    """The catalog a saved plan is reported against: the bundled catalogs plus *given*, else
    plus the user catalog the plan records (``assumptions.user_catalog``), else plus
    ``$WATTGPU_USER_CATALOG``. A recorded directory that is gone or not absolute is an error
    (its GPUs and LLMs would silently fall back to bundled rows or none); catalogs whose files
    differ from those the plan was made with (``assumptions.catalog_sha256``: edited since, or
    another overlay) are read as they are now, with a warning through *warn*."""
    from predictors.catalog.store import load_catalog

    a = doc.assumptions
    recorded = a.user_catalog
    if (
        given is None
        and recorded is not None
        and not (Path(recorded).is_absolute() and Path(recorded).is_dir())
    ):
        raise WattgpuError(
            f"{path}: assumptions.user_catalog: {recorded!r} is not a directory (the user "
            "catalog the plan was made with); restore it there or pass --user-catalog DIR"
        )
    directory = given if given is not None else (Path(recorded) if recorded else None)
    catalog = load_catalog(directory)
    if a.catalog_sha256 is not None and catalog.fingerprint != a.catalog_sha256 and warn:
        read = "the bundled catalogs" + (f" and {catalog.user_dir}" if catalog.user_dir else "")
        warn(
            f"warning: {path}: assumptions.catalog_sha256: {read} differ from the catalogs the "
            "plan was made with (edited since, or another user catalog); their figures "
            "(embodied emissions, GPU and model facts) are read as they are now"
        )
    return catalog
