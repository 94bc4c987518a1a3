"""What the trusted parent and its fork server say to each other: one JSON message per packet
on a SOCK_SEQPACKET pair (a fork request carries the child's two pipe ends), and the limits both
sides hold to."""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from typing import Any

SUBMISSION_MOUNT = "/submission"  # where a sandboxed forked child sees its submission
# What a submission may hold for it to be copied into the server's sandbox: far above any
# exercises/ folder (seven small .py files); a larger or stranger one (a FIFO, a device) is
# bind-mounted into a child started alone.
COPY_LIMIT_BYTES = 32 << 20
COPY_LIMIT_ENTRIES = 2000
READY_TIMEOUT_S = 120  # the server imports torch first: seconds on a loaded machine
REPLY_TIMEOUT_S = 30
EXIT_UNCAUGHT = 1  # what Python exits with on an uncaught exception
EXIT_SETUP_FAILED = 70  # the forked child could not become a child (its filter would not load)
MESSAGE_BYTES = 4096  # the largest message either side sends: a few short fields


def send(sock: socket.socket, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
    data = json.dumps(message).encode()
    if fds:
        socket.send_fds(sock, [data], list(fds))
    else:
        sock.send(data)


def receive(sock: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    """The next message and the descriptors it carried; None once the other side is gone."""
    data, fds, _flags, _addr = socket.recv_fds(sock, MESSAGE_BYTES, 2)
    message: dict[str, Any] | None = json.loads(data) if data else None
    return message, fds
