#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpora of the network fuzz targets (docs/fuzzing.md):
tests/fuzz/corpus/{message_codec,msn_package,ttl_package}/. Each seed is a
well-formed input as a real sender produces it, in the layout the target's
header comment describes; the fuzzer mutates from there. Little-endian, as on
every platform haloshift is tested on (the networks copy fields as they are in
memory). Run it from anywhere; it overwrites the seeds it writes and nothing else."""

import pathlib
import struct

CORPUS = pathlib.Path(__file__).resolve().parent / "corpus"


def write(target, name, data):
    path = CORPUS / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


# message_codec: byte 0 picks the type (0 int, 1 double, 2 record {int32, uint32, double},
# 3 std::array<std::byte, 3>, 4 bool, 5 enum class : uint8_t, 6 byte_buffer), the rest is the payload.
write("message_codec", "int", bytes([0]) + struct.pack("<i", -42))
write("message_codec", "double", bytes([1]) + struct.pack("<d", 0.1))
write("message_codec", "record", bytes([2]) + struct.pack("<iId", 7, 0xFF00FF00, -2.5))
write("message_codec", "bytes3", bytes([3]) + b"abc")
write("message_codec", "bool", bytes([4, 1]))
write("message_codec", "enum", bytes([5, 2]))
write("message_codec", "byte_buffer", bytes([6]) + b"hello, rank 3")
write("message_codec", "byte_buffer_empty", bytes([6]))


# msn_package: ranks, TTL, step (uint32 each, stored as value - 1 for ranks and TTL), then the
# package: uint32 count, then per message int32 origin, uint32 sequence, int32 ttl, uint32 length, payload.
def msn(ranks, ttl, step, messages):
    out = struct.pack("<III", ranks - 1, ttl - 1, step) + struct.pack("<I", len(messages))
    for origin, sequence, left, payload in messages:
        out += struct.pack("<iIiI", origin, sequence, left, len(payload)) + payload
    return out


write("msn_package", "idle_link", msn(8, 3, 5, []))  # the 4-byte package of a link with nothing to say
write("msn_package", "one_new", msn(8, 3, 5, [(2, 0, 3, struct.pack("<i", 7))]))  # first hop: ttl as posted
write("msn_package", "forwarded", msn(8, 3, 5, [(1, 4, 2, struct.pack("<i", -1)), (5, 1, 1, b"")]))
write("msn_package", "bytes", msn(16, 4, 9, [(15, 1000, 4, b"announcement"), (0, 0, 2, b"\x00" * 8)]))
write("msn_package", "single_rank", msn(1, 1, 0, [(0, 0, 1, struct.pack("<d", 3.5))]))


# ttl_package: byte 0 = (ndims - 1) | periodic bits << 2, bytes 1-3 = boxes - 1, bytes 4-6 = coordinates,
# byte 7 = index of the link's direction, hops - 1 and step as uint32, then the package: uint32 count,
# then per message int32 origin, uint32 sequence, int32 travelled[3], uint32 length, payload.
def directions(ndims):
    hz, hy = (1 if ndims > 2 else 0), (1 if ndims > 1 else 0)
    return [(x, y, z) for z in range(-hz, hz + 1) for y in range(-hy, hy + 1) for x in (-1, 0, 1) if x or y or z]


def rank_of(dims, coords):
    r = 0
    for d in range(3):
        r = r * dims[d] + coords[d]
    return r


def ttl(dims, periodic, coords, moved, hops, step, messages):
    ndims = len(dims)
    flags = (ndims - 1) | sum(1 << (2 + d) for d in range(ndims) if periodic[d])
    pad = lambda v, fill: list(v) + [fill] * (3 - len(v))
    out = bytes([flags] + [b - 1 for b in pad(dims, 1)] + pad(coords, 0) + [directions(ndims).index(moved)])
    out += struct.pack("<II", hops - 1, step) + struct.pack("<I", len(messages))
    full_dims, full_coords = pad(dims, 1), pad(coords, 0)
    for sequence, travelled, payload in messages:
        # The poster owns the box at -travelled from the receiver (wrapped around periodic dimensions).
        poster = [full_coords[d] - travelled[d] for d in range(3)]
        assert all(periodic[d] or 0 <= poster[d] < dims[d] for d in range(ndims)), "no box there"
        poster = [poster[d] % full_dims[d] for d in range(3)]
        out += struct.pack("<iIiiiI", rank_of(full_dims, poster), sequence, *travelled, len(payload)) + payload
    return out


four = struct.pack("<i", 11)
write("ttl_package", "idle_link_2d", ttl([3, 3], [True, True], [1, 1], (1, 0, 0), 2, 3, []))
write("ttl_package", "face_2d", ttl([3, 3], [True, True], [1, 1], (1, 0, 0), 2, 3,
                                    [(0, (1, 0, 0), four), (5, (2, 0, 0), b"far")]))
write("ttl_package", "corner_2d", ttl([3, 3], [True, True], [1, 1], (1, 1, 0), 2, 3,
                                      [(1, (1, 1, 0), four), (2, (2, 2, 0), b"")]))
write("ttl_package", "edge_3d", ttl([4, 4, 4], [False, False, False], [2, 2, 2], (0, 1, 1), 3, 7,
                                    [(9, (0, 1, 1), four), (3, (1, 2, 2), four), (4, (0, 2, 2), b"x" * 20)]))
write("ttl_package", "self_image_1d", ttl([1], [True], [0], (1, 0, 0), 1, 0, [(0, (1, 0, 0), four)]))


# Regression inputs: what the fuzz targets found before the decoders checked them (docs/fuzzing.md,
# "Findings"). Each must now raise haloshift::error; the smoke tests replay them on every run.
write("message_codec", "regress_bool_2", bytes([4, 2]))  # an invalid bool, undefined to use
write("message_codec", "regress_int_2_bytes", bytes([0, 1, 2]))  # decode() read 4 bytes from 2
write("msn_package", "regress_ttl_0", msn(8, 3, 5, [(2, 0, 0, b"")]))  # forwarded for ever with ttl -1, -2, ...
write("msn_package", "regress_ttl_int_min", msn(8, 3, 5, [(2, 0, -2**31, b"")]))  # ttl - 1 overflowed
write("msn_package", "regress_ttl_above", msn(8, 3, 5, [(2, 0, 7, b"")]))  # hops < 1
write("msn_package", "regress_more_hops_than_steps", msn(8, 3, 0, [(2, 0, 1, b"")]))  # posted_step < 0
write("msn_package", "regress_origin_negative", msn(8, 3, 5, [(-1, 0, 3, b"")]))  # delivered from rank -1
write("msn_package", "regress_trailing", msn(8, 3, 5, []) + b"\x07")  # ignored before
write("msn_package", "regress_count_huge", msn(8, 3, 5, [])[:12] + struct.pack("<I", 0xFFFFFFFF))
write("msn_package", "regress_length_huge", msn(8, 3, 5, [(2, 0, 3, bytes(12))])[:28] + b"\xff\xff\xff\xff" +
      bytes(12))
hdr_2d = bytes([1 | 12, 2, 2, 0, 1, 1, 0, directions(2).index((1, 0, 0))]) + struct.pack("<II", 1, 3)
def raw_ttl(header, messages):
    out = header + struct.pack("<I", len(messages))
    for origin, sequence, travelled, payload in messages:
        out += struct.pack("<iIiiiI", origin, sequence, *travelled, len(payload)) + payload
    return out
write("ttl_package", "regress_int_min", raw_ttl(hdr_2d, [(1, 0, (-2**31, 0, 0), b"")]))  # -INT_MIN, abs(INT_MIN)
write("ttl_package", "regress_no_hop", raw_ttl(hdr_2d, [(4, 0, (0, 0, 0), b"")]))  # delivered from itself
write("ttl_package", "regress_wrong_link", raw_ttl(hdr_2d, [(4, 0, (0, 1, 0), b"")]))
write("ttl_package", "regress_wrong_origin", raw_ttl(hdr_2d, [(7, 0, (1, 0, 0), b"")]))
write("ttl_package", "regress_trailing", raw_ttl(hdr_2d, [(1, 0, (1, 0, 0), b"")]) + b"\0\0")
# Non-periodic 3x3 at (1, 0): two hops along x lead off the grid (the empty optional was dereferenced).
hdr_closed = bytes([1, 2, 2, 0, 1, 0, 0, directions(2).index((1, 0, 0))]) + struct.pack("<II", 1, 3)
write("ttl_package", "regress_off_grid", raw_ttl(hdr_closed, [(0, 0, (2, 0, 0), b"")]))
