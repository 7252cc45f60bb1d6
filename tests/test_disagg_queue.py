"""The prefill pool's M/D/c queue (predictors.serving.disagg_queue) against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from predictors.serving.disagg_queue import erlang_c, mdc_wait_s


def test_erlang_c_matches_the_closed_forms() -> None:
    rho = np.linspace(0.05, 0.95, 19)
    # one server: an arrival waits with probability rho
    np.testing.assert_allclose(erlang_c(np.ones(rho.size), rho), rho, rtol=1e-12)
    # two servers, offered load 1: B(2, 1) = 1/5, C = B / (1 - rho (1 - B)) = 1/3
    np.testing.assert_allclose(erlang_c(np.array([2.0]), np.array([1.0])), [1.0 / 3.0])
    # general c: C = [a^c / c! / (1 - rho)] / [sum_k<c a^k / k! + a^c / c! / (1 - rho)]
    for c in (3, 7, 20):
        for a in (0.5, c * 0.6, c * 0.97):
            k = np.arange(c)
            terms = np.exp(k * np.log(a) - np.cumsum(np.concatenate(([0.0], np.log(k[1:])))))
            top = np.exp(c * np.log(a) - np.sum(np.log(np.arange(1, c + 1)))) / (1 - a / c)
            expected = top / (terms.sum() + top)
            np.testing.assert_allclose(erlang_c(np.array([float(c)]), np.array([a])), [expected])


def test_one_server_mean_wait_is_pollaczek_khinchine() -> None:
    s = 0.2
    lam = np.linspace(0.1, 4.9, 25)
    rho = lam * s
    expected = rho * s / (2.0 * (1.0 - rho))  # M/D/1, exact
    got = mdc_wait_s(np.ones(lam.size), np.full(lam.size, s), lam, None)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("percentile", [None, 50.0, 90.0, 99.0])
def test_wait_rises_with_load_falls_with_servers_and_diverges_at_saturation(
    percentile: float | None,
) -> None:
    s = np.full(40, 0.05)
    for servers in (1.0, 2.0, 5.0, 16.0):
        lam = np.linspace(0.0, servers / 0.05 * 0.999, 40)
        w = mdc_wait_s(np.full(40, servers), s, lam, percentile)
        assert w[0] == 0.0 and np.all(np.isfinite(w)) and np.all(w >= 0.0)
        assert np.all(np.diff(w) >= -1e-15)
        more = mdc_wait_s(np.full(40, servers + 1.0), s, lam, percentile)
        assert np.all(more <= w + 1e-15)
        over = mdc_wait_s(np.array([servers]), np.array([0.05]), np.array([servers / 0.05]), None)
        assert np.isinf(over[0])


def test_percentile_wait_is_zero_when_most_arrivals_do_not_wait() -> None:
    # one server at rho = 0.3: 70 % of arrivals find it idle, so the median wait is 0
    assert mdc_wait_s(np.array([1.0]), np.array([1.0]), np.array([0.3]), 50.0)[0] == 0.0
    assert mdc_wait_s(np.array([1.0]), np.array([1.0]), np.array([0.3]), 99.0)[0] > 0.0
