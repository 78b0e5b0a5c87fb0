"""Live editors' frames and presence: growing hostile frames are read or refused (Malformed)
within the paths' bounds."""

from __future__ import annotations

import pytest
from hypothesis import given
from pycrdt import write_var_uint

from collaboration.protocol import Malformed, awareness_read, frame_read
from scidraft.bounds import INPUT_PATHS, KB

from .harness import HOSTILE, assert_within, cases, measure, sizes

INPUT_PATH = "live-frame"
PATH = INPUT_PATHS[INPUT_PATH]
AWARENESS = INPUT_PATHS["live-awareness"]
LARGEST = 256 * KB  # LIVE_MESSAGE_MAX_BYTES: the consumer refuses longer frames unread

FRAMES = {
    "length past the end": lambda n: b"\x00\x02" + write_var_uint(2**62) + b"x" * n,
    "endless number": lambda n: b"\x00" + b"\xff" * n,
    "unknown types": lambda n: write_var_uint(n),
    "an update of zeros": lambda n: b"\x00\x02" + write_var_uint(n) + b"\x00" * n,
    "nested lengths": lambda n: b"\x01" + write_var_uint(n) + b"\x80" * (n - 1) + b"\x00",
}
PRESENCES = {
    "count past the end": lambda n: write_var_uint(2**40) + b"\x01\x01\x01x" * (n // 4),
    "many entries": lambda n: write_var_uint(n // 5) + b"\x01\x01\x02{}" * (n // 5),
    "long states": lambda n: write_var_uint(1) + b"\x01\x01" + write_var_uint(n) + b"{" * n,
    "not UTF-8": lambda n: write_var_uint(1) + b"\x01\x01" + write_var_uint(n) + b"\xff" * n,
}


@pytest.mark.slow
@HOSTILE
@given(case=cases(FRAMES), size=sizes(LARGEST, smallest=16))
def test_growing_hostile_frames_are_read_within_the_bounds(case, size):
    """A frame is read or refused as Malformed, within the bounds."""
    measured = measure(frame_read, FRAMES[case](size), refusals=(Malformed,))
    assert_within(PATH, measured, f"{case} at {size:,} bytes")


@pytest.mark.slow
@HOSTILE
@given(case=cases(PRESENCES), size=sizes(8 * LARGEST, smallest=16))
def test_growing_hostile_presence_is_read_within_the_bounds(case, size):
    """A presence update, even past LIVE_AWARENESS_MAX_BYTES, is read or refused within the
    bounds."""
    measured = measure(awareness_read, PRESENCES[case](size), refusals=(Malformed,))
    assert_within(AWARENESS, measured, f"{case} at {size:,} bytes")
