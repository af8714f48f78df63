"""Tests of the board model, the default board and the board validator.

Every constraint test edits a deep copy of the default board's parsed YAML, rebuilds the
board with ``Board.from_dict`` and checks the exact message ``check_board`` gives.
"""
from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from moderator.rules.board import (
    DEFAULT_BOARD_PATH,
    MIN_NEUTRAL_SPACES,
    WARNING_PREFIX,
    Board,
    BoardError,
    check_board,
    check_board_file,
    neutral_space_counts,
    reachable_sections,
    section_id,
)
from moderator.rules.components import COMPANIES, TRACK_TYPES

SHARES = "shares should follow the card counts plain > black-white > black > white"
TYPES = "track types are plain, black-white, black, white"


# ---------------------------------------------------------------- helpers
def source() -> dict[str, Any]:
    """A deep copy of the default board's parsed YAML, free to edit."""
    return copy.deepcopy(Board.default().source)


def section(src: dict[str, Any], a: str, b: str) -> dict[str, Any]:
    """The section mapping between cities ``a`` and ``b`` in ``src``."""
    for s in src["sections"]:
        if sorted(s["between"]) == sorted((a, b)):
            return s
    raise AssertionError(f"no section {a}-{b} on the default board")


def city(src: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(c for c in src["cities"] if c["id"] == cid)


def check(edit: Callable[[dict[str, Any]], None]) -> list[str]:
    """Messages for the default board after ``edit`` changed its source."""
    src = source()
    edit(src)
    return check_board(Board.from_dict(src))


def remove_city(src: dict[str, Any], cid: str) -> None:
    src["cities"] = [c for c in src["cities"] if c["id"] != cid]
    src["sections"] = [s for s in src["sections"] if cid not in s["between"]]


# ---------------------------------------------------------------- the default board
def test_default_board_is_valid():
    assert check_board(Board.default()) == []
    assert check_board_file(DEFAULT_BOARD_PATH) == []


def test_default_board_meets_board_facts():
    board = Board.default()
    assert 35 <= len(board.cities) <= 45
    assert all(len(c) == 3 and c.isalpha() and c.isupper() for c in board.cities)
    assert set(board.companies) == set(COMPANIES)
    starts = [co for s in board.sections.values() for co in s.starts]
    assert len(starts) == 11
    assert Counter(starts)["EPRG"] == 2
    homes = {co: board.cities[r.home].name for co, r in board.companies.items()}
    assert homes == {
        "WW": "Cheyenne", "MRR": "Marquette", "KCC": "Kansas City", "ESL": "Albany",
        "UMR": "Monterrey", "SFRB": "Sioux Falls", "DM": "Denver", "MS": "Miami",
        "BNL": "Billings", "EPRG": "El Paso",
    }
    counts = neutral_space_counts(board)
    assert counts["plain"] > counts["black-white"] > counts["black"] > counts["white"] > 0
    assert 170 <= sum(counts.values()) <= 200
    assert sum(1 for s in board.sections.values() if s.capacity <= 2) >= 5
    for co, company in COMPANIES.items():
        assert len(reachable_sections(board, co)) >= company.trains, co
    assert "not a transcription" in board.source["note"]


def test_default_board_file_uses_one_section_per_pair_and_safe_yaml():
    data = yaml.safe_load(DEFAULT_BOARD_PATH.read_text(encoding="utf-8"))
    pairs = [section_id(*s["between"]) for s in data["sections"]]
    assert len(pairs) == len(set(pairs))


# ---------------------------------------------------------------- lookups
def test_find_city_by_id_or_name_any_case():
    board = Board.default()
    assert board.find_city("DEN") == "DEN"
    assert board.find_city("den") == "DEN"
    assert board.find_city("Denver") == "DEN"
    assert board.find_city("DENVER") == "DEN"
    assert board.find_city("kansas city") == "KCY"
    assert board.find_city("St Louis") == "STL"
    assert board.find_city("st. louis") == "STL"
    assert board.find_city("Paris") is None
    assert board.find_city("") is None


def test_find_section_either_order_ids_or_names():
    board = Board.default()
    assert board.find_section("DEN-OMA") == "DEN-OMA"
    assert board.find_section("oma-den") == "DEN-OMA"
    assert board.find_section("Omaha-Denver") == "DEN-OMA"
    assert board.find_section("denver - omaha") == "DEN-OMA"
    assert board.find_section("Kansas City-St. Louis") == "KCY-STL"
    assert board.find_section("Salt Lake City to Cheyenne") == "CHY-SLC"
    assert board.find_section("Miami-Jacksonville") == "JAX-MIA"


def test_find_section_unknown_gives_none():
    board = Board.default()
    assert board.find_section("Miami-Seattle") is None  # both cities exist, no section
    assert board.find_section("Paris-Denver") is None
    assert board.find_section("Denver") is None
    assert board.find_section("DEN-OMA-KCY") is None


def test_section_capacity_counts_starting_spaces():
    board = Board.default()
    jax_mia = board.sections["JAX-MIA"]
    assert jax_mia.starts == ("MS",)
    assert jax_mia.capacity == len(jax_mia.spaces) + 1 == 4
    assert board.sections["DEN-OMA"].capacity == 2
    assert board.sections["BUF-TOR"].capacity == 1
    assert board.sections["DEN-OMA"].other("DEN") == "OMA"
    assert board.section_name("DEN-OMA") == "Denver-Omaha"


def test_company_routes():
    board = Board.default()
    assert board.companies["EPRG"].types == frozenset(TRACK_TYPES)
    assert sorted(board.companies["EPRG"].starts) == ["ABQ-ELP", "ELP-PHX"]
    assert board.companies["WW"].starts == ("BIL-CHY",)


# ---------------------------------------------------------------- cities
def test_too_many_cities():
    def edit(src):
        for i, (name, lat, lon) in enumerate([("Regina", 50.45, -104.61), ("Saskatoon", 52.13, -106.67)]):
            src["cities"].append({"id": f"RG{i}", "name": name, "lat": lat, "lon": lon})
            src["sections"].append({"between": [f"RG{i}", "CGY"], "spaces": ["plain"]})

    assert check(edit) == ["city count 46 outside 35-45"]


def test_too_few_cities():
    def edit(src):
        for cid in ("VAN", "SEA", "POR", "SFO", "LAX", "REN", "BOI", "CGY", "WPG", "CUU"):
            remove_city(src, cid)

    assert "city count 34 outside 35-45" in check(edit)


def test_city_outside_north_america():
    def edit(src):
        city(src, "SEA")["lat"] = 10

    assert check(edit) == [
        "city SEA (Seattle) lies at lat 10, lon -122.33, outside North America (lat 14..72, lon -170..-50)"
    ]


def test_city_east_of_north_america():
    def edit(src):
        city(src, "BOS")["lon"] = 2.35

    assert check(edit) == [
        "city BOS (Boston) lies at lat 42.36, lon 2.35, outside North America (lat 14..72, lon -170..-50)"
    ]


def test_city_id_not_short():
    def edit(src):
        src["cities"].append({"id": "SASKATOON", "name": "Saskatoon", "lat": 52.13, "lon": -106.67})
        src["sections"].append({"between": ["SASKATOON", "CGY"], "spaces": ["plain"]})

    assert check(edit) == ["city id 'SASKATOON' is not a short id (2-5 letters or digits, starting with a letter)"]


def test_city_name_with_hyphen():
    def edit(src):
        city(src, "WAS")["name"] = "Washington-DC"

    assert check(edit) == [
        "city name 'Washington-DC' contains '-' or '/'; sections are named 'City-City', so city names must not"
    ]


def test_duplicate_city_name():
    def edit(src):
        city(src, "POR")["name"] = "Seattle"

    assert check(edit) == [
        "city name 'Seattle' of POR is also a name or id of SEA; each name and id must identify one city"
    ]


def test_city_name_equal_to_another_id():
    def edit(src):
        city(src, "BOI")["name"] = "Den"

    assert check(edit) == ["city name 'Den' of BOI is also a name or id of DEN; each name and id must identify one city"]


# ---------------------------------------------------------------- sections and track types
def test_section_with_too_many_spaces():
    def edit(src):
        section(src, "DEN", "OMA")["spaces"] = ["plain"] * 5

    assert check(edit) == ["section DEN-OMA has 5 spaces; a section has 1-4"]


def test_starting_space_counts_toward_section_size():
    def edit(src):
        section(src, "JAX", "MIA")["spaces"].append("plain")  # 4 neutral + the MS start

    assert check(edit) == ["section JAX-MIA has 5 spaces; a section has 1-4"]


def test_section_without_spaces():
    def edit(src):
        section(src, "DEN", "OMA")["spaces"] = []

    assert check(edit) == ["section DEN-OMA has 0 spaces; a section has 1-4"]


def test_unknown_track_type_on_section():
    def edit(src):
        section(src, "DEN", "OMA")["spaces"] = ["plain", "purple"]

    assert check(edit) == [f"section DEN-OMA has a space of unknown track type 'purple'; {TYPES}"]


def test_track_type_missing():
    def edit(src):
        for s in src["sections"]:
            s["spaces"] = ["plain" if t == "white" else t for t in s["spaces"]]

    assert "track type white has no neutral space; every track type must occur on the board" in check(edit)


def test_track_type_shares_out_of_order():
    def edit(src):  # swap black and white everywhere: 31 black, 37 white
        swap = {"black": "white", "white": "black"}
        for s in src["sections"]:
            s["spaces"] = [swap.get(t, t) for t in s["spaces"]]

    assert check(edit) == [f"track type white has more neutral spaces (37) than black (31); {SHARES}"]


def test_track_type_shares_equal():
    def edit(src):  # 3 black spaces become white: 34 each
        left = 3
        for s in src["sections"]:
            for i, t in enumerate(s["spaces"]):
                if t == "black" and left:
                    s["spaces"][i] = "white"
                    left -= 1

    assert check(edit) == [f"track type white has as many neutral spaces (34) as black (34); {SHARES}"]


def test_network_not_connected():
    def edit(src):
        src["sections"] = [s for s in src["sections"] if "VAN" not in s["between"]]

    assert check(edit) == ["the network is not connected: VAN cannot be reached from SEA"]


def test_network_split_in_two():
    def edit(src):  # cut Mexico off: MTY-SAT, MTY-HOU, ELP-CUU
        src["sections"] = [
            s for s in src["sections"] if sorted(s["between"]) not in (["MTY", "SAT"], ["HOU", "MTY"], ["CUU", "ELP"])
        ]
        section(src, "CUU", "MTY")["starts"] = ["UMR"]

    assert "the network is not connected: CUU, MTY cannot be reached from VAN" in check(edit)


# ---------------------------------------------------------------- companies
def test_unknown_company():
    def edit(src):
        src["companies"]["XYZ"] = {"home": "DEN", "types": ["plain"]}

    assert check(edit) == [
        "company XYZ is not a company of the game; companies are WW, MRR, KCC, ESL, UMR, SFRB, DM, MS, BNL, EPRG"
    ]


def test_unknown_company_on_starting_space():
    def edit(src):
        section(src, "DEN", "OMA")["starts"] = ["XYZ"]

    assert check(edit) == ["section DEN-OMA holds a starting space of unknown company XYZ"]


def test_missing_company():
    def edit(src):
        del src["companies"]["WW"]

    assert check(edit) == [
        "company WW is missing from companies; every company needs a home station and track types"
    ]


def test_company_with_four_track_types():
    def edit(src):
        src["companies"]["WW"]["types"] = list(TRACK_TYPES)

    assert check(edit) == ["company WW may use 4 track types; every company but EPRG may use 1-3"]


def test_company_with_no_track_types():
    def edit(src):
        src["companies"]["KCC"]["types"] = []

    assert "company KCC may use 0 track types; every company but EPRG may use 1-3" in check(edit)


def test_eprg_with_three_track_types():
    def edit(src):
        src["companies"]["EPRG"]["types"] = ["plain", "black", "white"]

    assert check(edit) == ["company EPRG may use 3 track types; EPRG may use all 4"]


def test_company_with_unknown_track_type():
    def edit(src):
        src["companies"]["WW"]["types"] = ["plain", "purple"]

    assert check(edit) == [f"company WW may use unknown track type 'purple'; {TYPES}"]


def test_company_types_not_a_list():
    def edit(src):
        src["companies"]["WW"]["types"] = "plain"

    assert check(edit)[0] == "company WW: types must be a list of track types, e.g. [plain, black]"


def test_home_not_a_city():
    def edit(src):
        src["companies"]["WW"]["home"] = "XXX"

    assert check(edit) == ["company WW's home station XXX is not a city of the board"]


def test_eprg_with_one_starting_space():
    def edit(src):
        del section(src, "PHX", "ELP")["starts"]

    assert check(edit) == ["company EPRG has 1 starting space; EPRG has exactly 2"]


def test_company_with_two_starting_spaces():
    def edit(src):
        section(src, "DEN", "CHY")["starts"] = ["WW"]

    assert check(edit) == ["company WW has 2 starting spaces; every company but EPRG has exactly 1"]


def test_company_without_starting_space():
    def edit(src):
        del section(src, "CHY", "BIL")["starts"]

    assert check(edit) == ["company WW has 0 starting spaces; every company but EPRG has exactly 1"]


def test_starting_space_not_touching_home():
    def edit(src):
        del section(src, "KCY", "STL")["starts"]
        section(src, "STL", "CHI")["starts"] = ["KCC"]

    assert check(edit) == ["starting space of KCC on section CHI-STL does not touch its home station KCY"]


def test_two_starting_spaces_on_one_section():
    def edit(src):
        del section(src, "ABQ", "ELP")["starts"]
        section(src, "PHX", "ELP")["starts"] = ["EPRG", "EPRG"]

    assert check(edit) == [
        "section ELP-PHX holds 2 starting spaces of EPRG; a company may have only one train per section"
    ]


def test_company_cannot_reach_enough_sections():
    def edit(src):  # MRR may use white only, and no white space touches Marquette or Chicago
        src["companies"]["MRR"]["types"] = ["white"]
        section(src, "OMA", "CHI")["spaces"] = ["plain", "plain"]

    assert check(edit) == ["company MRR can reach only 1 section through its track types from MQT; it has 8 trains"]


def test_reach_counts_sections_through_usable_types_only():
    src = source()
    src["companies"]["MRR"]["types"] = ["white"]
    section(src, "OMA", "CHI")["spaces"] = ["plain", "plain"]
    board = Board.from_dict(src)
    assert reachable_sections(board, "MRR") == ["CHI-MQT"]  # its own starting section only
    assert reachable_sections(board, "XYZ") == []


# ---------------------------------------------------------------- capacity
def test_too_few_neutral_spaces():
    src = source()
    for s in src["sections"]:
        s["spaces"] = s["spaces"][:1]
    neutral = sum(len(s["spaces"]) for s in src["sections"])
    assert neutral < MIN_NEUTRAL_SPACES == 120
    msgs = check_board(Board.from_dict(src))
    assert f"the board has {neutral} neutral spaces; it needs at least 120 (131 trains, 11 of them on starting spaces)" in msgs


def test_too_few_contested_sections_is_a_warning():
    def edit(src):
        for s in src["sections"]:
            while len(s["spaces"]) + len(s.get("starts") or ()) < 3:
                s["spaces"].append("plain")

    msgs = check(edit)
    assert msgs == [
        "warning: only 0 sections have 1-2 spaces; at least 5 contested sections are expected "
        "where companies block each other"
    ]
    assert msgs[0].startswith(WARNING_PREFIX)


# ---------------------------------------------------------------- files
def test_check_board_file_missing(tmp_path: Path):
    path = tmp_path / "nope.yaml"
    msgs = check_board_file(path)
    assert len(msgs) == 1
    assert msgs[0].startswith(f"cannot read board file {path}")


def test_check_board_file_not_yaml(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text("cities: [\n  {id: DEN\n", encoding="utf-8")
    msgs = check_board_file(path)
    assert len(msgs) == 1
    assert msgs[0].startswith(f"{path}: not valid YAML")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", "a board file must be a mapping"),
        ("- just a list\n", "a board file must be a mapping"),
        ("name: x\n", "malformed board file"),
        ("cities: []\nsections: [{between: [DEN, OMA]}]\n", "names unknown city DEN"),
        ("cities: []\nsections: []\ncompanies: [WW]\n", "malformed board file"),
    ],
)
def test_check_board_file_malformed(tmp_path: Path, text: str, expected: str):
    path = tmp_path / "board.yaml"
    path.write_text(text, encoding="utf-8")
    msgs = check_board_file(path)
    assert len(msgs) == 1
    assert msgs[0].startswith(f"{path}: ")
    assert expected in msgs[0]


def test_check_board_file_not_utf8(tmp_path: Path):
    path = tmp_path / "board.yaml"
    path.write_bytes(b"name: \xff\xfe\x00bad\n")
    msgs = check_board_file(path)
    assert len(msgs) == 1 and str(path) in msgs[0]


def test_check_board_file_reports_constraints(tmp_path: Path):
    src = source()
    section(src, "DEN", "OMA")["spaces"] = ["plain"] * 5
    path = tmp_path / "board.yaml"
    path.write_text(yaml.safe_dump(src), encoding="utf-8")
    assert check_board_file(path) == ["section DEN-OMA has 5 spaces; a section has 1-4"]


def test_from_dict_rejects_duplicate_section():
    src = source()
    src["sections"].append({"between": ["OMA", "DEN"], "spaces": ["plain"]})
    with pytest.raises(BoardError, match="section DEN-OMA appears twice"):
        Board.from_dict(src)


def test_city_with_empty_name():
    def edit(src):
        city(src, "BOI")["name"] = "  "

    assert check(edit) == ["city BOI has an empty name"]
