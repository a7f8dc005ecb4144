"""The pass's reading of the live store's replies, without a server: every shape a stream comes in."""

from __future__ import annotations

from events.archive.replies import entries_of_reply, pairs


def test_a_stream_reads_the_same_from_plain_arrays_parsed_dicts_and_any_field_order():
    expected = [(1, b"one", "0" * 4, "a" * 4), (2, b"two", "a" * 4, "b" * 4)]
    fields = [[b"b", b"one", b"p", b"0000", b"h", b"aaaa"], [b"b", b"two", b"p", b"aaaa", b"h", b"bbbb"]]
    plain = [[b"%d-0" % n, names] for n, names in enumerate(fields, start=1)]
    parsed = [(b"%d-0" % n, dict(zip(names[::2], names[1::2], strict=True))) for n, names in enumerate(fields, start=1)]
    reordered = [[b"%d-0" % n, names[2:4] + names[:2] + names[4:]] for n, names in enumerate(fields, start=1)]
    assert entries_of_reply(plain) == entries_of_reply(parsed) == entries_of_reply(reordered) == expected
    assert entries_of_reply([]) == []


def test_versions_come_from_the_entry_ids_when_they_do_not_run_1_2_3():
    gappy = [[b"1-0", [b"b", b"x", b"p", b"00", b"h", b"aa"]], [b"3-0", [b"b", b"y", b"p", b"aa", b"h", b"bb"]]]
    assert [entry[0] for entry in entries_of_reply(gappy)] == [1, 3]


def test_a_hash_reads_from_a_flat_list_or_a_dict():
    assert pairs([b"a", b"1", b"b", b"2"]) == pairs({b"a": b"1", b"b": b"2"}) == {b"a": b"1", b"b": b"2"}
