"""The share policy: whatever principals take and give back, none is refused or pushed out for
what another holds, and neither bound is ever passed."""

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from thoughtledger.adapters.common.shares import Held, ShareRefusedError, Shares

_moves = st.lists(
    st.tuples(st.sampled_from(["take", "release"]), st.sampled_from(["a", "b", "c", None])),
    max_size=120,
)


def _noting(ended: list[str | None], who: str | None) -> Callable[[], None]:
    def note() -> None:
        ended.append(who)

    return note


@settings(max_examples=200, deadline=None)
@given(
    moves=_moves,
    per=st.integers(1, 5),
    extra=st.integers(0, 8),
    overflow=st.sampled_from(["refuse", "oldest"]),
)
def test_no_principal_pays_for_another_and_no_bound_is_passed(
    moves: list[tuple[str, str | None]], per: int, extra: int, overflow: str
) -> None:
    shares = Shares("things", "--max", per_principal=per, total=per + extra, overflow=overflow)  # type: ignore[arg-type]
    held: dict[str | None, list[Held]] = {}
    ended: list[str | None] = []
    for move, who in moves:
        if move == "release":
            if held.get(who):
                held[who].pop(0).release()
            continue
        before = {name: shares.holds(name) for name in ("a", "b", "c", None)}
        mine = before[who]
        try:
            slot = shares.take(who, on_end=_noting(ended, who))
        except ShareRefusedError:
            share = shares.total if who is None else per
            # Refused only at its own share, or when full and nobody holds two more than it.
            assert (overflow == "refuse" and mine >= share) or (
                shares.count >= shares.total and max(before.values()) < mine + 2
            )
            continue
        held.setdefault(who, []).append(slot)
        for name in ended:
            # Pushed out: itself, or one holding at least two more than the taker held.
            assert name == who or before[name] >= mine + 2
            held[name] = [kept for kept in held[name] if not kept.ended]
        ended.clear()
        assert shares.count <= shares.total
        assert all(shares.holds(name) <= (shares.total if name is None else per) for name in before)
        assert shares.count == sum(len(slots) for slots in held.values())
