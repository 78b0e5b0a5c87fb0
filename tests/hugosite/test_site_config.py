"""A Hugo site's config mapped to settings, menus, entry sets and math macros."""

from __future__ import annotations

from hugosite.site_config import site_config_from_mapping


def test_config_maps_params_menus_and_entry_sets():
    """hugo.toml keys, in any case, become settings, menu entries and entry sets."""
    config = site_config_from_mapping(
        {
            "title": "Lab",
            "baseURL": "https://lab.example/",
            "pagination": {"pagerSize": 6},
            "params": {
                "institute": "Inst",
                "author": "me",
                "ShowShareButtons": False,
                "recommendationCount": 0,
                "entrySets": {"math": {"titleField": "mathTitle", "countLabel": "Results"}},
                "feed": {"notesPerPage": 5, "promotionsPerPage": 1, "promotionPositions": "4"},
            },
            "menu": {
                "main": [
                    {"identifier": "ref", "name": "Reference", "weight": 20},
                    {"name": "Math A–Z", "parent": "ref", "url": "/a/", "params": {"note": "n"}},
                ]
            },
        }
    )
    assert config.settings["title"] == "Lab"
    assert config.settings["pager_size"] == 6
    assert config.settings["show_share_buttons"] is False
    assert config.settings["recommendation_count"] == 3  # 0 falls back to 3, as the theme does
    assert config.settings["notes_per_page"] == 5
    assert config.settings["promotion_positions"] == "4"
    assert config.entry_sets["math"]["title_field"] == "mathTitle"
    assert config.entry_sets["math"]["category_field"] == "entryCategory"
    child = config.menus[1]
    assert (child.identifier, child.parent, child.note) == ("math-a-z", "ref", "n")


def test_site_math_macros_come_from_params_or_a_mathjax_configuration():
    """params.mathMacros and a MathJax configuration's params.mathjax.tex.macros are the site's
    preamble, in that order."""
    config = site_config_from_mapping(
        {
            "params": {
                "mathMacros": "\\newcommand{\\R}{\\mathbb{R}}",
                "mathjax": {"tex": {"macros": {"E": "\\mathbb{E}"}}},
            }
        }
    )
    assert config.settings["math_macros"] == (
        "\\newcommand{\\R}{\\mathbb{R}}\n\\newcommand{\\E}{\\mathbb{E}}"
    )
    assert "math_macros" not in site_config_from_mapping({"params": {}}).settings
