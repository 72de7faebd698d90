"""The drill's verdict: one table of figures (those that must be zero marked), one of the
faults and their recovery times."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tests.drill.faults import FaultResult


@dataclass(frozen=True)
class Figure:
    name: str
    value: int | str
    #: The drill fails unless this figure is 0.
    must_be_zero: bool = False
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.must_be_zero and self.value != 0


def fault_failed(fault: FaultResult) -> bool:
    return fault.recovered is None or fault.supervisor_died


def passed(figures: Sequence[Figure], faults: Sequence[FaultResult]) -> bool:
    return not any(f.failed for f in figures) and not any(fault_failed(f) for f in faults)


def render(figures: Sequence[Figure], faults: Sequence[FaultResult]) -> str:
    name_width = max(len(f.name) for f in figures)
    value_width = max(len(str(f.value)) for f in figures)
    lines = [f"{'figure':<{name_width}}  {'value':>{value_width}}  must be 0"]
    lines.append("-" * len(lines[0]))
    for f in figures:
        mark = ("FAIL" if f.failed else "ok") if f.must_be_zero else ""
        line = f"{f.name:<{name_width}}  {f.value!s:>{value_width}}  {mark:<9}"
        lines.append((f"{line}  {f.detail}" if f.detail else line).rstrip())
    lines.append("")
    lines.append("fault                                   at (s)  recovered in  failed attempts")
    lines.append("-" * len(lines[-1]))
    for fault in faults:
        recovered = "NOT RECOVERED" if fault.recovered is None else f"{fault.recovered:.2f} s"
        if fault.supervisor_died:
            recovered += " (FAIL)"
        lines.append(
            f"{fault.name:<38}  {fault.at:>6.1f}  {recovered:>12}  {fault.failed_attempts:>15}"
        )
        for note in ([fault.detail] if fault.detail else []) + fault.notes:
            lines.append(f"    {note}")
    lines.append("")
    lines.append("PASS" if passed(figures, faults) else "FAIL")
    return "\n".join(lines)
