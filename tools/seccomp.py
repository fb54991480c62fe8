"""The seccomp filter bwrap installs for every sandboxed command (``bwrap --seccomp FD``).

Mounts can make a file read-only but cannot stop ``connect()`` to a Unix socket file (a
read-only bind still connects), so without this filter a sandboxed command could drive any
local service listening on one: the user's tmux server (``tmux -L sock new-window '...'`` runs
outside the sandbox), the D-Bus session bus, ``docker.sock``, an X server, the SSH agent. The
filter is a classic BPF program, written here so that nothing needs libseccomp:

* ``socket()`` only for the families a network namespace isolates (``AF_INET``, ``AF_INET6``,
  ``AF_NETLINK``); ``AF_UNIX`` is refused with ``EPERM`` (no named or abstract socket of the host
  can be reached), every other family (``AF_VSOCK`` reaches the hypervisor) with ``EAFNOSUPPORT``;
* ``socketpair()`` only as a connected stream or seqpacket pair, which can talk to nothing but its
  other end (pipes between a program's own processes, multiprocessing): a datagram pair could
  ``sendto()`` any named datagram socket on the host, so it is refused;
* ``io_uring_setup``/``_enter``/``_register``: io_uring operations run without passing through
  seccomp, so they would bypass the rest;
* ``keyctl``, ``add_key``, ``request_key``: the kernel keyrings are not namespaced, and the user's
  keyring (Kerberos tickets, tokens tools keep there) is readable by every process of the user;
* the x32 ABI on x86_64 (the same syscalls under other numbers) and any architecture but the
  native one and its 32-bit compat mode (i386 on x86_64, arm on aarch64; on i386 ``socketcall``,
  whose family the filter cannot read, is refused).

:func:`program` returns the filter for this machine, or None where the architecture is not one
of these (the sandbox then says that Unix sockets are not blocked).
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_AND_K = 0x54
_RET_K = 0x06

RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

_NR = 0
_ARCH = 4
_ARG0 = 16
"""Offsets in ``struct seccomp_data``; an argument's low 32 bits (both supported machines are
little-endian, and the kernel reads ``int`` arguments from those bits only)."""
_ARG1 = 24

AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCK_STREAM, SOCK_SEQPACKET = 1, 5
_SOCK_TYPE_MASK = 0xF
_X32_BIT = 0x40000000


@dataclass(frozen=True, slots=True)
class _Abi:
    """One syscall table: its audit architecture and the numbers the filter looks at."""

    arch: int
    socket: int
    socketpair: int
    refused: tuple[int, ...]
    """Refused outright: ``add_key``, ``request_key``, ``keyctl`` (and ``socketcall`` on i386)."""
    io_uring_first: int = 425
    io_uring_last: int = 427
    x32: bool = False


_X86_64 = _Abi(0xC000003E, socket=41, socketpair=53, refused=(248, 249, 250), x32=True)
_I386 = _Abi(0x40000003, socket=359, socketpair=360, refused=(102, 286, 287, 288))
_AARCH64 = _Abi(0xC00000B7, socket=198, socketpair=199, refused=(217, 218, 219))
_ARM = _Abi(0x40000028, socket=281, socketpair=288, refused=(309, 310, 311))

MACHINES: dict[str, tuple[_Abi, ...]] = {
    "x86_64": (_X86_64, _I386),
    "amd64": (_X86_64, _I386),
    "aarch64": (_AARCH64, _ARM),
    "arm64": (_AARCH64, _ARM),
}
"""Native ABI first, then the 32-bit one the same kernel runs."""


def machine() -> str:
    """This machine's architecture as the kernel names it (``x86_64``, ``aarch64``, ...)."""
    return platform.machine().lower()


def supported(arch: str | None = None) -> bool:
    """Whether :func:`program` can build a filter for ``arch`` (default: this machine)."""
    return (arch or machine()) in MACHINES


def program(arch: str | None = None) -> bytes | None:
    """The filter as ``struct sock_filter[]`` bytes for ``arch`` (default: this machine), or None
    when the architecture is not supported."""
    abis = MACHINES.get(arch or machine())
    if abis is None:
        return None
    return b"".join(_pack(code, jt, jf, k) for code, jt, jf, k in _assemble(abis))


# ---------------------------------------------------------------------------------------------
# A tiny assembler: instructions jump to labels, resolved to the forward offsets BPF needs.

_Insn = tuple[int, str | int, str | int, int]
"""``(code, jump-if-true, jump-if-false, k)``; a jump is a label or 0 (the next instruction)."""


def _assemble(abis: tuple[_Abi, ...]) -> list[tuple[int, int, int, int]]:
    body: list[_Insn | str] = [(_LD_W_ABS, 0, 0, _ARCH)]
    for index, abi in enumerate(abis):
        body.append((_JEQ_K, f"abi{index}", 0, abi.arch))
    body.append((_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS))
    for index, abi in enumerate(abis):
        body += _abi_block(f"abi{index}", abi)
    body += [
        "allow", (_RET_K, 0, 0, RET_ALLOW),
        "eperm", (_RET_K, 0, 0, _RET_ERRNO | errno.EPERM),
        "eafnosupport", (_RET_K, 0, 0, _RET_ERRNO | errno.EAFNOSUPPORT),
    ]
    return _resolve(body)


def _abi_block(label: str, abi: _Abi) -> list[_Insn | str]:
    block: list[_Insn | str] = [label, (_LD_W_ABS, 0, 0, _NR)]
    if abi.x32:
        block.append((_JSET_K, "eperm", 0, _X32_BIT))
    block += [(_JEQ_K, "eperm", 0, number) for number in abi.refused]
    block += [
        (_JEQ_K, f"{label}.socket", 0, abi.socket),
        (_JEQ_K, f"{label}.pair", 0, abi.socketpair),
        (_JGE_K, 0, "allow", abi.io_uring_first),
        (_JGE_K, "allow", "eperm", abi.io_uring_last + 1),
        f"{label}.socket", (_LD_W_ABS, 0, 0, _ARG0),
        (_JEQ_K, "allow", 0, AF_INET),
        (_JEQ_K, "allow", 0, AF_INET6),
        (_JEQ_K, "allow", 0, AF_NETLINK),
        (_JEQ_K, "eperm", "eafnosupport", AF_UNIX),
        f"{label}.pair", (_LD_W_ABS, 0, 0, _ARG1),
        (_AND_K, 0, 0, _SOCK_TYPE_MASK),
        (_JEQ_K, "allow", 0, SOCK_STREAM),
        (_JEQ_K, "allow", "eperm", SOCK_SEQPACKET),
    ]
    return block


def _resolve(body: list[_Insn | str]) -> list[tuple[int, int, int, int]]:
    labels: dict[str, int] = {}
    code: list[_Insn] = []
    for item in body:
        if isinstance(item, str):
            labels[item] = len(code)
        else:
            code.append(item)
    out: list[tuple[int, int, int, int]] = []
    for position, (op, jt, jf, k) in enumerate(code):
        out.append((op, _offset(jt, position, labels), _offset(jf, position, labels), k))
    return out


def _offset(target: str | int, position: int, labels: dict[str, int]) -> int:
    if isinstance(target, int):
        return target
    offset = labels[target] - position - 1
    if not 0 <= offset <= 255:  # pragma: no cover - the program is small and jumps only forward
        raise ValueError(f"jump to {target} out of range")
    return offset


def _pack(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)
