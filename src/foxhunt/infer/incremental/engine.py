"""Incremental observed features: per-symbol state that advances one bar in O(features) work.

:class:`IncrementalFeatures` keeps, for every symbol, a ring buffer of the last
:data:`~foxhunt.infer.incremental.windows.RING` values of a few base series (prices, log
returns, the volatility terms ...), the recursive states of the smoothers (EMA, MACD, Wilder
RSI/ATR/DMI: :mod:`~foxhunt.infer.incremental.smoothers`) and the session VWAP's running sums.
:meth:`IncrementalFeatures.step` takes one new bar for each of ``k`` symbols and returns their
210 observed features (``foxhunt.data.features.observed.observed_features`` order), computed for all
``k`` symbols at once with numpy: the work per bar does not depend on how many bars came before.

The batch pipeline (:func:`foxhunt.data.features.table.compute_features`) stays the reference: a
state started at a symbol's first bar gives its features to float32 rounding on every row the
pipeline keeps (after the 200-bar warm-up; earlier rows are NaN or partial here and never used).
``tests/infer/incremental/test_engine.py`` checks every feature against it on real bars.

The whole state is a handful of float64 arrays with a first axis of symbol slots
(:meth:`state_dict` / :meth:`from_state_dict`), about 36 kB per symbol.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Mapping, Sequence

import numpy as np

from foxhunt.data.features import observed as o
from foxhunt.infer.incremental import smoothers as sm
from foxhunt.infer.incremental import windows as w
from foxhunt.infer.incremental.kernel_layout import NAMES as _NAMES
from foxhunt.infer.incremental.kernel_layout import WIDTHS as _WIDTHS

FORMAT = 2
"""Version of :meth:`IncrementalFeatures.state_dict`'s layout. Format 1 also kept the
Bollinger sums of squares (``state.bb_sum2``), which the deviation no longer reads: such a
state loads, the key ignored."""

_RSI = np.array(o.RSI_PERIODS, np.float64)
_ATR = np.array(o.ATR_PERIODS, np.float64)
_ADX = np.array(o.ADX_PERIODS, np.float64)
_MACD = np.array(o.MACD_PARAMS, np.int64)
_BB = np.array(o.BB_WINDOWS, np.float64)
_EMA = np.array(o.EMA_SPANS, np.float64)
_LN2 = math.log(2.0)

KERNEL_ENV = "FOXHUNT_FEATURE_KERNEL"
"""``numpy`` forces the numpy step; unset or ``numba``, the compiled one where numba is
installed (:mod:`~foxhunt.infer.incremental.compiled`)."""


def compiled_available() -> bool:
    """Whether the compiled step runs here: numba installed and not turned off."""
    if os.environ.get(KERNEL_ENV, "numba").strip().lower() == "numpy":
        return False
    return importlib.util.find_spec("numba") is not None


def feature_names() -> tuple[str, ...]:
    """The observed features this engine computes, in the batch pipeline's order."""
    return tuple(name for name, _ in o.observed_features())


class IncrementalFeatures:
    """Observed features of many symbols, advanced one bar at a time.

    Args:
        capacity: Symbol slots to allocate at first (grown as needed).
        compiled: Step with the numba kernel (:mod:`~foxhunt.infer.incremental.compiled`,
            the same arithmetic in scalar loops: a bar of one symbol in microseconds instead
            of milliseconds) or the numpy one; None: compiled where
            :func:`compiled_available`.
    """

    def __init__(self, capacity: int = 8, *, compiled: bool | None = None) -> None:
        self.names = feature_names()
        self.compiled = compiled_available() if compiled is None else compiled
        self.slots: dict[str, int] = {}
        self.count = np.zeros(capacity, np.int64)  # bars seen per slot
        self.session = np.zeros(capacity, np.int64)  # trading day of the latest bar
        self.ring = np.full((capacity, len(w.SERIES), w.RING), np.nan)
        self._pack(np.zeros((capacity, sum(_WIDTHS.values()))))

    def _pack(self, packed: np.ndarray) -> None:
        """Hold the recursive states as one (slots, width) array; ``state`` maps each name to
        its columns (views: writing a view writes the packed array the kernel reads)."""
        self.packed = packed
        self.state: dict[str, np.ndarray] = {}
        at = 0
        for k, m in _WIDTHS.items():
            self.state[k] = packed[:, at : at + m]
            at += m

    @property
    def nbytes(self) -> int:
        """Bytes of the state of the symbols seen (slots allocated ahead not counted)."""
        arrays = [self.count, self.session, self.ring, self.packed]
        per_slot = sum(a.nbytes for a in arrays) // self.count.shape[0]
        return per_slot * len(self.slots)

    def bars(self, symbol: str) -> int:
        """Bars ``symbol`` has been advanced by (0 if never seen)."""
        slot = self.slots.get(symbol)
        return 0 if slot is None else int(self.count[slot])

    def slot_of(self, symbols: Sequence[str]) -> np.ndarray:
        """Slots of ``symbols``, allocating (and growing the arrays) for new ones."""
        for s in symbols:
            if s not in self.slots:
                self.slots[s] = len(self.slots)
        need = len(self.slots)
        if need > self.count.shape[0]:
            self._grow(max(need, 2 * self.count.shape[0]))
        return np.array([self.slots[s] for s in symbols], np.int64)

    def _grow(self, capacity: int) -> None:
        extra = capacity - self.count.shape[0]
        self.count = np.concatenate([self.count, np.zeros(extra, np.int64)])
        self.session = np.concatenate([self.session, np.zeros(extra, np.int64)])
        pad = np.full((extra, *self.ring.shape[1:]), np.nan)
        self.ring = np.concatenate([self.ring, pad])
        self._pack(np.concatenate([self.packed, np.zeros((extra, self.packed.shape[1]))]))

    def step(
        self,
        slots: np.ndarray,
        values: np.ndarray,
        session: np.ndarray,
        *,
        derived: bool = True,
        features: bool = True,
    ) -> np.ndarray | None:
        """Advance ``k`` distinct slots by one bar each.

        Args:
            slots: (k,) distinct slots (:meth:`slot_of`).
            values: (k, 5) float64 open, high, low, close, volume (validated bars).
            session: (k,) int trading day of each bar (resets the session VWAP).
            derived: Compute the windowed series later windows read (the volatilities ranked
                by the percentiles, the stochastics' %K). Only a bar more than
                :data:`~foxhunt.infer.incremental.windows.RING` bars before any bar whose
                features are wanted may skip them (a backlog being fast-forwarded).
            features: Compute and return the features (False: only advance the state).

        Returns:
            (k, 210) float64 observed features at these bars (meaningful once a symbol has
            more than the warm-up's 200 bars), or None without ``features``.

        Raises:
            ValueError: a slot given twice (one of its bars would be lost) or not held.
        """
        if len(slots) > 1 and len(np.unique(slots)) != len(slots):
            raise ValueError(f"step: slots must be distinct, got {np.asarray(slots).tolist()}")
        if len(slots) and not 0 <= int(np.min(slots)) <= int(np.max(slots)) < len(self.slots):
            raise ValueError(
                f"step: slots must be below the {len(self.slots)} held (slot_of), "
                f"got {np.asarray(slots).tolist()}"
            )
        if not self.compiled:
            with np.errstate(divide="ignore", invalid="ignore"):  # one for the whole step
                return self._step(slots, values, session, derived, features)
        from foxhunt.infer.incremental import compiled

        out = np.full((len(slots), len(self.names)), np.nan)
        compiled.step(
            np.ascontiguousarray(slots, np.int64),
            np.ascontiguousarray(values, np.float64),
            np.ascontiguousarray(session, np.int64),
            self.count,
            self.session,
            self.ring,
            self.packed,
            out,
            derived,
            features,
        )
        return out if features else None

    def _step(
        self,
        slots: np.ndarray,
        values: np.ndarray,
        session: np.ndarray,
        derived: bool,
        features: bool,
    ) -> np.ndarray | None:
        t = self.count[slots]
        ring = np.roll(self.ring[slots], -1, axis=2)  # oldest value drops off the front
        state = {k: v[slots] for k, v in self.state.items()}
        op, hi, lo, c, v = (values[:, j] for j in range(5))
        prev_c = ring[:, w.IX["close"], -2]
        prev_h, prev_l = ring[:, w.IX["high"], -2], ring[:, w.IX["low"], -2]
        prev_tp = ring[:, w.IX["tp"], -2]
        first = t == 0
        lc = np.log(c)
        r1 = np.where(first, np.nan, lc - ring[:, w.IX["lc"], -2])
        hl, co = np.log(hi / lo), np.log(c / op)
        tp = (hi + lo + c) / 3.0
        # TA-Lib's MFI takes typical prices within 1e-14 of each other (relative) as equal
        moved = np.abs(tp - prev_tp) > sm.TA_EPS * (np.abs(tp) + np.abs(prev_tp))
        new = {
            "open": op,
            "high": hi,
            "low": lo,
            "close": c,
            "volume": v,
            "lc": lc,
            "r1": r1,
            "hl": hl,
            "co": co,
            "rs": np.log(hi / c) * np.log(hi / op) + np.log(lo / c) * np.log(lo / op),
            "lv": np.log1p(v),
            "tp": tp,
            "gk": 0.5 * hl**2 - (2.0 * _LN2 - 1.0) * co**2,
            "signed": np.sign(r1) * v,
            "tpv": tp * v,
            "absr1": np.abs(r1),
            "mf_pos": np.where(moved & (tp > prev_tp), tp * v, 0.0),
            "mf_neg": np.where(moved & (tp < prev_tp), tp * v, 0.0),
        }
        for name, x in new.items():
            ring[:, w.IX[name], -1] = x
        if derived:
            ring[:, w.IX["rv20"], -1] = w.rv(ring, 20)
            ring[:, w.IX["pk10"], -1] = w.pk(ring, 10)
            for k, sk, _ in o.STOCH_PARAMS:
                ring[:, w.IX[f"fastk{k}"], -1] = w.stochastic_fastk(ring, k)
                ring[:, w.IX[f"slowk{k}"], -1] = w.mean_last(w.last(ring, f"fastk{k}", sk))
        else:
            ring[:, w.DERIVED, -1] = np.nan
        if not features:
            self._advance_only(state, t, ring, values, prev_c, prev_h, prev_l, slots, session)
            self._store(slots, ring, state, t, session)
            return None

        f = w.Out(len(slots))
        win = w.Windows(ring)
        vols = w.returns(ring, win, f)
        self._recursive(state, t, ring, values, prev_c, prev_h, prev_l, f)
        ema = self._ema(state, t, c)
        f["obs__vwap_dist_session"] = self._session_vwap(state, t, slots, session, c, tp * v, v)
        w.oscillators(ring, win, f)
        w.volume(ring, win, f)
        w.shape(ring, f)
        w.regime(ring, win, f, ema, vols)
        self._store(slots, ring, state, t, session)
        return f.array

    def _store(
        self,
        slots: np.ndarray,
        ring: np.ndarray,
        state: dict[str, np.ndarray],
        t: np.ndarray,
        session: np.ndarray,
    ) -> None:
        self.ring[slots] = ring
        for k, a in state.items():
            self.state[k][slots] = a
        self.count[slots] = t + 1
        self.session[slots] = session

    def _advance_only(
        self,
        s: dict[str, np.ndarray],
        t: np.ndarray,
        ring: np.ndarray,
        values: np.ndarray,
        prev_c: np.ndarray,
        prev_h: np.ndarray,
        prev_l: np.ndarray,
        slots: np.ndarray,
        session: np.ndarray,
    ) -> None:
        """The recursive states' step without the features (a fast-forwarded bar)."""
        self._recursive(s, t, ring, values, prev_c, prev_h, prev_l, w.Out(len(t)))
        c, v = values[:, 3], values[:, 4]
        self._ema(s, t, c)
        self._session_vwap(s, t, slots, session, c, ring[:, w.IX["tpv"], -1], v)

    def _recursive(
        self,
        s: dict[str, np.ndarray],
        t: np.ndarray,
        ring: np.ndarray,
        values: np.ndarray,
        prev_c: np.ndarray,
        prev_h: np.ndarray,
        prev_l: np.ndarray,
        f: w.Out,
    ) -> None:
        """RSI, MACD, Bollinger, NATR, DMI (the TA-Lib indicators with a state)."""
        hi, lo, c = values[:, 1], values[:, 2], values[:, 3]
        rsi = sm.rsi_step(s, t, c - prev_c, _RSI)
        w.put(f, _NAMES["rsi"], w.clean(rsi - 50.0) / 50.0)
        macd, sig, hist = sm.macd_step(s, t, c, _MACD)
        cc = c[:, None]
        w.put(f, _NAMES["macd"], w.div(np.concatenate([macd, sig, hist], axis=1), cc))
        closes = ring[:, w.IX["close"]]
        mid, std = sm.bbands_step(s, t, c, closes, _BB)
        up, dn = mid + std * 2.0, mid - std * 2.0
        w.put(f, _NAMES["bb_pctb"], w.div(cc - dn, up - dn) - 0.5)
        w.put(f, _NAMES["bb_width"], w.div(up - dn, mid))
        tr = sm.true_range(hi, lo, prev_c)
        atr = sm.atr_step(s, t, tr, _ATR)
        natr = np.where(cc == 0.0, 0.0, (atr / cc) * 100.0)
        w.put(f, _NAMES["natr"], w.clean(natr) / 100.0)
        plus, minus, adx = sm.dmi_step(s, t, hi - prev_h, prev_l - lo, tr, _ADX)
        dmi = np.concatenate([adx, plus, minus], axis=1)
        w.put(f, _NAMES["dmi"], w.clean(dmi) / 100.0)

    @staticmethod
    def _ema(s: dict[str, np.ndarray], t: np.ndarray, c: np.ndarray) -> np.ndarray:
        """polars ``ewm_mean(span=n, adjust=False)``, as polars computes it."""
        alpha = 2.0 / (_EMA + 1.0)
        old = 1.0 - alpha
        x = c[:, None]
        ema = np.where((t == 0)[:, None], x, (old * s["ema"] + alpha * x) / (old + alpha))
        s["ema"] = ema
        return ema

    def _session_vwap(
        self,
        s: dict[str, np.ndarray],
        t: np.ndarray,
        slots: np.ndarray,
        session: np.ndarray,
        c: np.ndarray,
        tpv: np.ndarray,
        v: np.ndarray,
    ) -> np.ndarray:
        """``ln(c / VWAP)`` since the session's first bar (c when it has no volume yet)."""
        fresh = (t == 0) | (session != self.session[slots])
        sums = np.where(fresh[:, None], 0.0, s["vwap"])
        sums = sums + np.stack([tpv, v], axis=1)
        s["vwap"] = sums
        vwap = np.where(sums[:, 1] > 0, sums[:, 0] / sums[:, 1], c)
        return np.log(c / vwap)

    # --- persistence -------------------------------------------------------------------------

    def state_dict(self) -> dict[str, np.ndarray]:
        """Every array of the state (trimmed to the used slots), for ``np.savez``."""
        n = len(self.slots)
        out = {
            "format": np.array([FORMAT, w.RING, len(w.SERIES)], np.int64),
            "symbols": np.array(sorted(self.slots, key=self.slots.__getitem__), dtype=str),
            "count": self.count[:n],
            "session": self.session[:n],
            "ring": self.ring[:n],
        }
        return out | {f"state.{k}": v[:n] for k, v in self.state.items()}

    @classmethod
    def from_state_dict(
        cls, d: Mapping[str, np.ndarray], *, compiled: bool | None = None
    ) -> IncrementalFeatures:
        """Inverse of :meth:`state_dict`.

        Args:
            d: the saved arrays.
            compiled: the step to run from here, as in the constructor (the state is the
                same for both).

        Raises:
            ValueError: another format or layout, or arrays that do not fit its symbols.
        """
        fmt = [int(x) for x in d["format"]]
        known = fmt[:1] in ([1], [FORMAT])  # 1: the same arrays and bb_sum2, not read
        if not known or fmt[1:] != [w.RING, len(w.SERIES)]:
            raise ValueError(
                f"feature state format {fmt}, expected {[FORMAT, w.RING, len(w.SERIES)]}"
            )
        symbols = [str(s) for s in d["symbols"]]
        self = cls(capacity=max(1, len(symbols)), compiled=compiled)
        self.slots = {s: i for i, s in enumerate(symbols)}
        n = len(symbols)
        shapes = {"count": (n,), "session": (n,), "ring": (n, len(w.SERIES), w.RING)}
        shapes |= {f"state.{k}": (n, m) for k, m in _WIDTHS.items()}
        for key, shape in shapes.items():
            if tuple(d[key].shape) != shape:
                raise ValueError(
                    f"feature state: {key} has shape {tuple(d[key].shape)}, expected {shape} "
                    f"for its {n} symbols"
                )
        self.count[:n] = d["count"]
        self.session[:n] = d["session"]
        self.ring[:n] = d["ring"]
        for k in _WIDTHS:
            self.state[k][:n] = d[f"state.{k}"]
        return self
