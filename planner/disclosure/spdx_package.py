"""What SPDX 3.0.1 requires of every ``ai_AIPackage`` beyond its AI fields, with the values the
catalog and the plan support and SPDX's "no assertion" where they support none.

The AIPackage class (spec page model/AI/Classes/AIPackage, "External properties restrictions")
requires ``suppliedBy``, ``releaseTime``, ``software_downloadLocation``,
``software_packageVersion`` and ``software_primaryPurpose``; the AI profile's conformance
requires exactly one ``hasConcludedLicense`` and one ``hasDeclaredLicense`` Relationship from each
AIPackage to a license. wattgpu's catalog (``catalogs/llms.csv``) records a model's Hugging Face
repository id and its architecture, not its revision, release date or license, so:

* ``suppliedBy``: an ``Agent`` named after the id's owner (``meta-llama`` of
  ``meta-llama/Llama-3.1-8B-Instruct``), the namespace that publishes the repository. A plain
  ``Agent``, not an ``Organization``: a Hugging Face namespace is a user or an organisation and the
  catalog does not say which (the spec: "It can also just be an Agent if it is not known what
  specific type an Agent is"). An id with no owner gets one ``Agent`` named ``NOASSERTION``.
* ``software_downloadLocation``: ``https://huggingface.co/<id>`` (the model ids are Hugging Face
  repository ids: the disclosure's ``checkpoint`` field); ``NOASSERTION`` (SPDX 2's value for an
  unknown download location; 3.0.1 defines none for this ``xsd:anyURI``) for an id that is not
  one.
* ``software_packageVersion``: ``NOASSERTION``: the revision is not recorded.
* ``releaseTime``: the document's creation time (the release date is not recorded), said in the
  package's ``comment``.
* both licenses: the ``expandedlicensing_NoAssertionLicense`` individual (no license recorded).
"""

from __future__ import annotations

import re
from typing import Any

NOASSERTION = "NOASSERTION"
NO_ASSERTION_LICENSE = "expandedlicensing_NoAssertionLicense"
HUGGING_FACE = "https://huggingface.co/"
#: a Hugging Face repository id: ``owner/name`` (or a legacy bare ``name``) of letters, digits,
#: ``-``, ``_`` and ``.``, neither part starting with ``.`` or ``-``
_REPO_ID = re.compile(r"(?:([A-Za-z0-9_][A-Za-z0-9_.-]*)/)?[A-Za-z0-9_][A-Za-z0-9_.-]*")

PACKAGE_COMMENT = (
    "Catalog facts only (catalogs/llms.csv records the Hugging Face repository id, not the "
    "revision, release date or license): suppliedBy is the namespace that owns the repository "
    "id; downloadLocation is its Hugging Face URL; packageVersion is NOASSERTION (revision not "
    "recorded); releaseTime is this document's creation time, not the model's release date "
    "(not recorded); the concluded and declared licenses are NoAssertionLicense."
)
LICENSE_COMMENT = "The catalog records no license for this model; wattgpu makes no assertion."


def repo_owner(model_id: str) -> str | None:
    """The owner of Hugging Face repository id *model_id* (None: not an ``owner/name`` id)."""
    match = _REPO_ID.fullmatch(model_id)
    return match.group(1) if match else None


def download_location(model_id: str) -> str:
    """*model_id*'s Hugging Face URL, or ``NOASSERTION`` when it is not a repository id."""
    return HUGGING_FACE + model_id if _REPO_ID.fullmatch(model_id) else NOASSERTION


def suppliers(model_ids: list[str], base: str, info: str) -> tuple[list[dict[str, Any]], list[str]]:
    """One ``Agent`` per distinct supplier of *model_ids* (first seen first) and, per model id,
    the spdxId of its supplier."""
    agents: dict[str | None, dict[str, Any]] = {}
    for model_id in model_ids:
        owner = repo_owner(model_id)
        if owner not in agents:
            agents[owner] = {
                "type": "Agent",
                "spdxId": f"{base}#supplier-{len(agents)}",
                "creationInfo": info,
                "name": owner if owner is not None else NOASSERTION,
                "comment": (
                    f"the Hugging Face namespace {owner} (owner of the repository id)"
                    if owner is not None
                    else "supplier not known: the model id is not a Hugging Face owner/name id"
                ),
            }
    return list(agents.values()), [agents[repo_owner(m)]["spdxId"] for m in model_ids]


def package_properties(model_id: str, supplier: str, created: str) -> dict[str, Any]:
    """The properties an ``ai_AIPackage`` of *model_id* must have besides its AI fields."""
    return {
        "comment": PACKAGE_COMMENT,
        "suppliedBy": supplier,
        "releaseTime": created,
        "software_downloadLocation": download_location(model_id),
        "software_packageVersion": NOASSERTION,
        "software_primaryPurpose": "model",
    }


def license_relationships(package: str, info: str) -> list[dict[str, Any]]:
    """The package's one ``hasConcludedLicense`` and one ``hasDeclaredLicense`` Relationship, both
    to ``NoAssertionLicense``."""
    return [
        {
            "type": "Relationship",
            "spdxId": f"{package}-{kind}",
            "creationInfo": info,
            "from": package,
            "to": [NO_ASSERTION_LICENSE],
            "relationshipType": kind,
            "comment": LICENSE_COMMENT,
        }
        for kind in ("hasConcludedLicense", "hasDeclaredLicense")
    ]
