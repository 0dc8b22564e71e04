"""The json parser's ``allow...`` options: lenient JSON normalized, positions of the text as written."""

from __future__ import annotations

import json

import pytest

from connectors.files.formats.json_lenient import Leniency, normalized, parse_leniently

ALL = Leniency(True, True, True, True, True, True)


@pytest.mark.parametrize(
    ("text", "lenient", "value"),
    [
        ("{'id': 1, 'name': 'a'}", Leniency(), {"id": 1, "name": "a"}),
        ("{'s': 'say \"hi\"'}", Leniency(), {"s": 'say "hi"'}),  # a double quote inside single quotes
        ("{'s': 'it\\'s'}", Leniency(), {"s": "it's"}),  # \' is a quote
        ("{'s': 'a\\nb\\u00e9\\\\'}", Leniency(), {"s": "a\nb\u00e9\\"}),  # JSON's escapes stay
        ('{"s": "it\'s", \'t\': [\'x\', "y"]}', Leniency(), {"s": "it's", "t": ["x", "y"]}),
        ('{"id": 1, /* c */ "s": "/* not */"} // tail', ALL, {"id": 1, "s": "/* not */"}),
        ("{id: 1, $n_1: {x: [1]}, 5x: 2}", ALL, {"id": 1, "$n_1": {"x": [1]}, "5x": 2}),
        ('{"a": 007, "b": -00.5, "c": 0, "d": 0e3}', ALL, {"a": 7, "b": -0.5, "c": 0, "d": 0.0}),
        ('{"s": "a\\qb\\\'"}', ALL, {"s": "aqb'"}),
        ('{"s": "a\tb\x01"}', ALL, {"s": "a\tb\x01"}),
        (
            '{"a": +INF, "b": -INF, "c": +Infinity, "d": "+INF"}',
            Leniency(),
            {"a": float("inf"), "b": -float("inf"), "c": float("inf"), "d": "+INF"},
        ),
    ],
)
def test_lenient_json_reads_as_spark_reads_it(text: str, lenient: Leniency, value: object) -> None:
    again = normalized(text, lenient)
    assert again is not None
    json_text, where = again
    assert json.loads(json_text) == value
    assert len(where) == len(json_text) + 1 and where[0] == 0 and where[-1] == len(text)
    assert where == sorted(where)  # every slice of the normalized text is one of the text as written


@pytest.mark.parametrize(
    ("text", "lenient"),
    [
        ('{"id": 1}', ALL),  # nothing to rewrite
        ("{'open: 1}", ALL),
        ('{"id": 1 /* open', ALL),
        ("{id: 1}", Leniency()),  # each feature only when its option is on
        ('{"id": 1, /* c */ "s": 2}', Leniency()),
        ('{"a": 007}', Leniency()),
        ('{"s": "a\\qb"}', Leniency(single_quotes=False)),
        ('{"s": "a\tb"}', Leniency()),
    ],
)
def test_text_left_malformed_is_not_normalized(text: str, lenient: Leniency) -> None:
    again = normalized(text, lenient)
    if again is not None:  # rewritten as far as allowed: still not JSON
        with pytest.raises(json.JSONDecodeError):
            json.loads(again[0])


def test_a_slice_of_the_normalized_text_is_given_back_as_written() -> None:
    def parse(t: str, written: object) -> str:
        json.loads(t)
        return written(t.index("{", 1), t.index("}") + 1)  # type: ignore[operator]

    text = "{'a': {b: [001, 'x'] /* c */}, 'c': 2}"
    assert parse_leniently(parse, text, ALL) == "{b: [001, 'x'] /* c */}"
    with pytest.raises(json.JSONDecodeError):  # not allowed: the first refusal stands
        parse_leniently(parse, text, Leniency(single_quotes=False))
    with pytest.raises(json.JSONDecodeError, match="Expecting property name"):
        parse_leniently(parse, "{'a': 1, b: 2}", Leniency())
    assert parse_leniently(lambda t, _w: None, "{'a': 1}", ALL) is None  # refused both ways: None


def test_without_non_numeric_numbers_a_nan_token_outside_strings_is_refused() -> None:
    strict = Leniency(non_numeric=False)

    def parse(t: str, _written: object) -> object:
        return json.loads(t)

    assert parse_leniently(parse, '{"s": "NaN", "t": \'-INF\', "v": 1}', strict) == {
        "s": "NaN",
        "t": "-INF",
        "v": 1,
    }
    for text in ('{"v": NaN}', '{"v": -Infinity}', '{"v": [1, +INF]}'):
        with pytest.raises(ValueError, match="allowNonNumericNumbers=false"):
            parse_leniently(parse, text, strict)
    assert parse_leniently(parse, '{"v": +INF}', Leniency()) == {"v": float("inf")}
