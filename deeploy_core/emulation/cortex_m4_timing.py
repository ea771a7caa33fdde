"""An estimate of the cycles a Cortex-M4 spends on an instruction, from the timing its manual documents.

:mod:`~deeploy_core.emulation.instruction_counting` counts instructions exactly;
a platform plugin also wants to know roughly how long they take.  A cycle-exact
Cortex-M4 model needs the bus, the flash wait states and the pipeline's
interlocks, which no emulator here has; this table gives the figures of the
*Arm Cortex-M4 Processor Technical Reference Manual* (DDI 0439B, section 3.3.1
"Cortex-M4 instructions", Table 3-1, and section 7.2.3 "FPU instruction set",
Table 7-1) for zero-wait-state memory, with one fixed choice where the manual
gives a range.  It is an **estimate**: real parts add wait states, and the
manual's pipelining credits are not modelled.

What the table relies on (P is the pipeline refill of a taken branch, "1 to 3
depending on alignment and width of the target instruction"):

* data processing, shifts, compares, ``MUL``, ``MLA``, ``MLS``, the 64-bit
  multiplies (``SMULL``, ``UMLAL``, ...), the DSP multiplies (``SMLAD``,
  ``SMLABB``, ``SMULWB``, ...), saturation, packing, extension and SIMD: 1;
* single loads (``LDR``, ``LDRB``, ``LDRSH``, ...): 2.  The manual lets a load
  that follows another load pipeline to 1; not credited here (a choice: the
  estimate leans high);
* single stores (``STR``, ``STRB``, ``STRH``): 1 (the write buffer takes the
  data; the manual's figure when stores pipeline), ``LDRD`` 3 and ``STRD`` 2;
* ``LDM``/``STM``/``PUSH``/``POP``: 1 + N for N registers;
* ``SDIV``/``UDIV``: 2 to 12 depending on the operands; taken as 12, the
  documented worst case, because the operands are not known to the table;
* branches: 1 when not taken, 1 + P when taken, with **P = 2**; any other
  write to the PC (``POP {..., pc}``, ``LDR pc``, ``BX``, ``MOV pc``) also
  adds P.  Whether a branch was taken is decided by the caller from the
  sequence of executed blocks;
* FPU: ``VADD``, ``VSUB``, ``VMUL``, ``VNMUL``, ``VABS``, ``VNEG``, ``VCMP``,
  ``VCVT``, ``VMOV``, ``VMRS``/``VMSR``: 1; ``VMLA``, ``VMLS``, ``VNMLA``,
  ``VNMLS``, ``VFMA``, ``VFMS``, ``VFNMA``, ``VFNMS``: 3; ``VDIV`` and
  ``VSQRT``: 14; ``VLDR``/``VSTR``: 2; ``VLDM``/``VSTM``/``VPUSH``/``VPOP``:
  1 + N for N words;
* ``IT`` is counted as an instruction of 1 cycle (the manual's folding into a
  preceding 16-bit instruction is not credited), and an instruction whose
  condition fails in an IT block costs what it would cost when it passes.
"""

from __future__ import annotations

from typing import Any

REFILL_CYCLES = 2
"""P: the pipeline refill after a taken branch or another write to the PC (the manual's range is 1 to 3)."""

DIVIDE_CYCLES = 12
"""SDIV/UDIV: the manual's worst case of its 2 to 12 cycles."""

_FIXED = {
    **dict.fromkeys(("ldr", "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrt", "ldrbt", "ldrht", "ldrsbt", "ldrsht", "ldrex",
                     "ldrexb", "ldrexh", "vldr", "vstr"), 2),
    **dict.fromkeys(("str", "strb", "strh", "strt", "strbt", "strht", "strex", "strexb", "strexh"), 1),
    "ldrd": 3, "strd": 2,
    **dict.fromkeys(("sdiv", "udiv"), DIVIDE_CYCLES),
    **dict.fromkeys(("vmla", "vmls", "vnmla", "vnmls", "vfma", "vfms", "vfnma", "vfnms"), 3),
    **dict.fromkeys(("vdiv", "vsqrt"), 14),
}
"""Instructions whose cost is fixed and not 1 (every other instruction takes 1 cycle, before any refill)."""

_MULTIPLE = ("ldm", "ldmdb", "stm", "stmdb", "push", "pop", "vldmia", "vldmdb", "vstmia", "vstmdb", "vpush", "vpop")
"""1 + N: N counts the registers transferred (a double-precision register is two words)."""


def _words(instruction: Any) -> int:
    """The 32-bit words a load/store multiple moves: its register operands, less the base register if any."""
    from capstone.arm import ARM_OP_REG

    names = [instruction.reg_name(operand.reg) for operand in instruction.operands if operand.type == ARM_OP_REG]
    if instruction.insn_name() not in ("push", "pop", "vpush", "vpop") and names:
        names = names[1:]  # the base register of LDM/STM/VLDM/VSTM
    return sum(2 if name.startswith("d") else 1 for name in names)


def writes_pc(instruction: Any) -> bool:
    """Whether the instruction can change the flow (a branch or any other write to the PC)."""
    return "pc" in (instruction.reg_name(register) for register in instruction.regs_access()[1])


def cycles(instruction: Any) -> tuple[int, int]:
    """(cycles when the flow falls through, extra cycles when it was redirected) of one capstone instruction
    (decoded with details on); the second is :data:`REFILL_CYCLES` for instructions that write the PC, else 0."""
    name = instruction.insn_name()
    if name in _MULTIPLE:
        base = 1 + _words(instruction)
    elif name in ("vldr", "vstr") and instruction.op_str.startswith("d"):
        base = 3
    elif name == "vmov" and len(instruction.operands) > 2:
        base = 2  # two core registers to or from a double (or two singles)
    else:
        base = _FIXED.get(name, 1)
    return base, REFILL_CYCLES if writes_pc(instruction) else 0
