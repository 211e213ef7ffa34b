"""One "departs from the released code" mechanism: options marked RELEASED, listed by core.options.departures for
the manifest and every protocol's report header."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

from vreason.core.options import RELEASED, ProtocolOptions, departures, is_released, released_defaults
from vreason.core.registry import benchmarks, load_builtins


class _Opts(ProtocolOptions):
    mode: str = Field("paper", json_schema_extra=RELEASED)
    flag: bool = Field(True, json_schema_extra=RELEASED)
    path: str | None = Field(None, json_schema_extra=RELEASED)
    other: int = Field(3)


def test_marked_options_that_differ_from_their_defaults_are_listed_in_declaration_order():
    assert released_defaults(_Opts) == {"mode": "paper", "flag": True, "path": None}
    assert not is_released(_Opts, "other")
    assert departures(_Opts()) == {}
    assert departures(_Opts(other=9)) == {}
    assert departures(_Opts(path="", mode="paper")) == {}  # empty text for an unset default is not a departure
    assert departures(_Opts(path="x.yaml", flag=False, mode="code")) == {"mode": "code", "flag": False,
                                                                         "path": "x.yaml"}
    assert departures(None) == {}


EXAMPLES: dict[str, dict[str, Any]] = {
    "rise": {"sym_jpeg": False},
    "ruler": {"missing_metric": "skip"},
    "mmecof": {"quality_scale": "1-5"},
    "pai-g": {"unparsed": "unscored"},
    "pai-u": {"repetition_penalty": None},
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_seed_protocol_marks_its_departures(name):
    load_builtins()
    model = benchmarks.get(name).options_model
    assert released_defaults(model), f"{name} marks no option RELEASED"
    assert departures(model()) == {}, "the defaults are the released code's (or the paper's)"
    assert departures(model(**EXAMPLES[name])) == EXAMPLES[name]


def test_rise_header_names_its_departures():
    from vreason.protocols.rise.protocol import RiseProtocol

    assert RiseProtocol().header()[0] == "RISE-Video: released-code defaults (no departing option)"
    head = RiseProtocol(sym_jpeg=False, maze_mode="strict").header()[0]
    assert head == "RISE-Video: options departing from the released code: maze_mode=strict, sym_jpeg=false"
