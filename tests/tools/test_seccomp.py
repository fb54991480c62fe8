"""The sandbox's seccomp filter, run through a classic-BPF interpreter for every supported ABI (the
x86_64 one also runs for real in the sandbox tests)."""

from __future__ import annotations

import errno
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from baton.tools import seccomp

ALLOW = seccomp.RET_ALLOW
EPERM = 0x00050000 | errno.EPERM
EAFNOSUPPORT = 0x00050000 | errno.EAFNOSUPPORT
ENOSYS = 0x00050000 | errno.ENOSYS

# (machine, audit arch, socket, socketpair, refused numbers: socketcall, add_key, request_key, keyctl)
ABIS = [
    ("x86_64", 0xC000003E, 41, 53, (248, 249, 250)),
    ("x86_64", 0x40000003, 359, 360, (102, 286, 287, 288)),
    ("aarch64", 0xC00000B7, 198, 199, (217, 218, 219)),
    ("aarch64", 0x40000028, 281, 288, (309, 310, 311)),
]
IO_URING = (425, 426, 427)


def run(program: bytes, nr: int, arch: int, *args: int) -> int:
    """What the filter returns for one syscall (``struct seccomp_data``, little-endian)."""
    padded = (*args, 0, 0, 0, 0, 0, 0)[:6]
    data = struct.pack("<iIQ6Q", nr, arch, 0, *padded)
    code = [struct.unpack_from("=HBBI", program, offset) for offset in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        if op == 0x20:  # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
        elif op == 0x54:  # and #k
            acc &= k
        elif op == 0x06:  # ret #k
            return k
        elif op in (0x15, 0x35, 0x45):  # jeq, jge, jset
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[op]
            pc += jt if taken else jf
        else:
            raise AssertionError(f"unexpected instruction {op:#x}")
        pc += 1


@pytest.mark.parametrize(("machine", "arch", "socket", "socketpair", "refused"), ABIS)
def test_each_abi_refuses_what_reaches_host_services(machine: str, arch: int, socket: int, socketpair: int,
                                                     refused: tuple[int, ...]) -> None:
    program = seccomp.program(machine)
    assert program is not None
    assert run(program, socket, arch, seccomp.AF_UNIX, 1) == EPERM
    assert run(program, socket, arch, 0xFFFF_FFFF_0000_0000 | seccomp.AF_UNIX, 1) == EPERM, "only the int counts"
    for family in (seccomp.AF_INET, seccomp.AF_INET6, seccomp.AF_NETLINK):
        assert run(program, socket, arch, family, 1) == ALLOW
    assert run(program, socket, arch, 40, 1) == EAFNOSUPPORT  # AF_VSOCK: the hypervisor
    assert run(program, socketpair, arch, seccomp.AF_UNIX, 1 | 0o4000 | 0o2000000) == ALLOW  # nonblock, cloexec
    assert run(program, socketpair, arch, seccomp.AF_UNIX, 5) == ALLOW
    assert run(program, socketpair, arch, seccomp.AF_UNIX, 2) == EPERM, "a datagram pair can sendto() any socket"
    for number in (*IO_URING, *refused):
        assert run(program, number, arch) == EPERM


@given(st.integers(min_value=0, max_value=1000), st.sampled_from(ABIS))
def test_every_other_syscall_is_allowed(nr: int, abi: tuple[str, int, int, int, tuple[int, ...]]) -> None:
    machine, arch, socket, socketpair, refused = abi
    program = seccomp.program(machine)
    assert program is not None
    expected = EPERM if nr in (*IO_URING, *refused) else ALLOW
    if nr not in (socket, socketpair):
        assert run(program, nr, arch, 0, 0) == expected


def test_x32_and_foreign_architectures_are_refused() -> None:
    program = seccomp.program("x86_64")
    assert program is not None
    assert run(program, 0x40000000 | 41, 0xC000003E, seccomp.AF_UNIX) == EPERM
    assert run(program, 0x40000000 | 0, 0xC000003E) == EPERM, "the x32 ABI as a whole"
    assert run(program, 41, 0xC00000B7, seccomp.AF_UNIX) == ENOSYS, "aarch64 numbers on an x86_64 filter"
    assert seccomp.program("riscv64") is None and not seccomp.supported("riscv64")
