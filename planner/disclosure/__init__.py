"""Disclosure fields of a plan (EU AI Act, SCI, GHG Protocol, AI Energy Score) and their
machine-readable exports (SPDX 3.0 AI profile, CycloneDX 1.6)."""
