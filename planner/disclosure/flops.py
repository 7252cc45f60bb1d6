"""Inference FLOPs per request, as the GPAI Model Documentation Form asks: ``2·N_active`` per
token processed plus the attention score and value products, from the catalog config.

Per request with ``L_in`` prompt and ``L_out`` output tokens (forward pass only, one
multiply-add = 2 FLOPs):

* linear layers: ``2 · N_active · (L_in + L_out)`` (N_active from ``active_params_b``,
  embeddings included as the catalog counts them);
* attention: ``4 · n_layers · n_heads · head_dim · C`` with ``C`` the summed context lengths
  the queries attend to: ``L_in (L_in + 1) / 2`` for the causal prefill plus
  ``L_out · L_in + L_out (L_out + 1) / 2`` for decoding (each new token attends to every token
  before it). For ``sliding`` attention every context is capped at the window; ``hybrid`` and
  ``mla`` models are counted with full attention at ``head_dim`` (an upper bound).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

METHOD = (
    "FLOPs per request = 2·N_active·(L_in + L_out) + 4·n_layers·n_heads·head_dim·C, with C = "
    "L_in(L_in+1)/2 + L_out·L_in + L_out(L_out+1)/2 the causal context summed over the prompt "
    "(prefill) and every output token (decode), capped at the window for sliding attention; "
    "N_active and the architecture from the catalog config (catalogs/llms.csv); forward pass "
    "only, no speculative decoding or recomputation. Task: the scenario's load (prompt and "
    "output lengths per model entry); hardware: the planned GPUs."
)


@dataclass(frozen=True)
class RequestFlops:
    """FLOPs of one request, split into linear layers and attention."""

    linear: float
    attention: float

    @property
    def total(self) -> float:
        """All FLOPs of the request."""
        return self.linear + self.attention


def _context_sum(n: int, start: int, window: int | None) -> float:
    """Σ_{t=1..n} min(start + t, window): contexts of *n* queries after *start* tokens."""
    if window is None or start + n <= window:
        return n * start + n * (n + 1) / 2.0
    free = max(0, min(n, window - start))  # queries before the window is full
    return free * start + free * (free + 1) / 2.0 + (n - free) * float(window)


def request_flops(llm: dict[str, Any], input_tokens: float, output_tokens: float) -> RequestFlops:
    """FLOPs of one request of *llm* (a catalog row) at the given prompt and output lengths."""
    l_in, l_out = int(round(input_tokens)), int(round(output_tokens))
    n_active = float(llm["active_params_b"]) * 1e9
    window = llm.get("sliding_window") if llm.get("attention_kind") == "sliding" else None
    window = int(window) if window else None
    context = _context_sum(l_in, 0, window) + _context_sum(l_out, l_in, window)
    per_context = 4.0 * llm["num_layers"] * llm["num_attention_heads"] * llm["head_dim"]
    return RequestFlops(linear=2.0 * n_active * (l_in + l_out), attention=per_context * context)
