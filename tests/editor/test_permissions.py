"""The permission matrix: every URL of the `editor` namespace × role × method.

The URL list comes from the URLconf itself, so a new editor URL without a rule in RULES
fails `test_every_editor_url_has_a_rule` (and the matrix cannot skip it).
"""

from __future__ import annotations

import itertools
import json

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from bibliography.services import bibfile_create
from notes import services
from notes.models import Note
from tests.images.samples import png_upload

ROLES = ("anonymous", "own", "other", "editor", "admin")
LOGIN = "login"  # 302 to /accounts/login/
INTO_APP = "app"  # 302 to a /write/ page

# name → method → role → expected: LOGIN, INTO_APP or a status code.
ALL_ALLOWED_GET = {"anonymous": LOGIN, "own": 200, "other": 404, "editor": 200, "admin": 200}
POST_ONLY_GET = {"anonymous": LOGIN, "own": 405, "other": 405, "editor": 405, "admin": 405}
REVIEWERS_GET = {"anonymous": LOGIN, "own": 403, "other": 403, "editor": 200, "admin": 200}
ADMIN_ONLY = {"anonymous": LOGIN, "own": 403, "other": 403, "editor": 403, "admin": 200}
RULES: dict[str, dict[str, dict[str, object]]] = {
    "dashboard": {
        "GET": {"anonymous": LOGIN, "own": 200, "other": 200, "editor": 200, "admin": 200},
        "POST": POST_ONLY_GET,
    },
    "new": {
        "GET": POST_ONLY_GET,
        "POST": {
            "anonymous": LOGIN,
            "own": INTO_APP,
            "other": INTO_APP,
            "editor": INTO_APP,
            "admin": INTO_APP,
        },
    },  # fmt: skip
    "edit": {
        "GET": ALL_ALLOWED_GET,
        "POST": {
            "anonymous": LOGIN,
            "own": INTO_APP,
            "other": 404,
            "editor": INTO_APP,
            "admin": INTO_APP,
        },
    },  # fmt: skip
    "preview": {
        "GET": POST_ONLY_GET,
        "POST": {"anonymous": LOGIN, "own": 200, "other": 404, "editor": 200, "admin": 200},
    },
    "autosave": {
        "GET": POST_ONLY_GET,
        "POST": {"anonymous": LOGIN, "own": 200, "other": 404, "editor": 200, "admin": 200},
    },
    "image_upload": {
        "GET": POST_ONLY_GET,
        "POST": {"anonymous": LOGIN, "own": 200, "other": 404, "editor": 200, "admin": 200},
    },
    "revisions": {"GET": ALL_ALLOWED_GET, "POST": POST_ONLY_GET},
    # An Editor's reset of the live document (collaboration.recovery); co-authors may not.
    "live_reset": {
        "GET": POST_ONLY_GET,
        "POST": {
            "anonymous": LOGIN,
            "own": 403,
            "other": 404,
            "editor": INTO_APP,
            "admin": INTO_APP,
        },
    },  # fmt: skip
    # GET asks first; POST moves the (draft) note to the trash, which the matrix then undoes.
    "delete": {
        "GET": ALL_ALLOWED_GET,
        "POST": {
            "anonymous": LOGIN,
            "own": INTO_APP,
            "other": 404,
            "editor": INTO_APP,
            "admin": INTO_APP,
        },
    },  # fmt: skip
    # The trash (editor/trash.py): Editors and Admins. The matrix's note is not in the trash,
    # so a permitted restore finds nothing to restore (404).
    "trash": {"GET": REVIEWERS_GET, "POST": POST_ONLY_GET},
    "trash_restore": {
        "GET": POST_ONLY_GET,
        "POST": {**REVIEWERS_GET, "editor": 404, "admin": 404},
    },
    "cite_search": {"GET": ALL_ALLOWED_GET, "POST": POST_ONLY_GET},
    # The labels of other notes, for completing \ref{slug:label} (editor/completion.py).
    "labels": {"GET": ALL_ALLOWED_GET, "POST": POST_ONLY_GET},
    # Everyone logged in has a list of their own files and may add one.
    "bibliographies": {
        "GET": {"anonymous": LOGIN, "own": 200, "other": 200, "editor": 200, "admin": 200},
        "POST": {
            "anonymous": LOGIN,
            "own": INTO_APP,
            "other": INTO_APP,
            "editor": INTO_APP,
            "admin": INTO_APP,
        },
    },  # fmt: skip
    # "own" is the Author who owns the file; "other" another Author (404, as for notes).
    "bibliography": {
        "GET": ALL_ALLOWED_GET,
        "POST": {
            "anonymous": LOGIN,
            "own": INTO_APP,
            "other": 404,
            "editor": INTO_APP,
            "admin": INTO_APP,
        },
    },  # fmt: skip
    # Only Editors and Admins make a file public; its owner sees the file but is refused.
    "bibliography_public": {
        "GET": POST_ONLY_GET,
        "POST": {
            "anonymous": LOGIN,
            "own": 403,
            "other": 404,
            "editor": INTO_APP,
            "admin": INTO_APP,
        },
    },  # fmt: skip
    # GET asks for confirmation (what restoring changes), POST restores.
    "restore": {
        "GET": ALL_ALLOWED_GET,
        "POST": {
            "anonymous": LOGIN,
            "own": INTO_APP,
            "other": 404,
            "editor": INTO_APP,
            "admin": INTO_APP,
        },
    },  # fmt: skip
    # Everyone signed in has a list of the waiting reference lists of the notes they may edit.
    "reference_changes": {
        "GET": {"anonymous": LOGIN, "own": 200, "other": 200, "editor": 200, "admin": 200},
        "POST": POST_ONLY_GET,
    },
    # Review (editor/review.py): Editors and Admins only. The matrix's note is a draft, so a
    # permitted decision is refused as "not awaiting review" (409).
    "review": {"GET": REVIEWERS_GET, "POST": POST_ONLY_GET},
    "review_note": {"GET": REVIEWERS_GET, "POST": POST_ONLY_GET},
    "review_approve": {
        "GET": POST_ONLY_GET,
        "POST": {**REVIEWERS_GET, "editor": 409, "admin": 409},
    },
    "review_send_back": {
        "GET": POST_ONLY_GET,
        "POST": {**REVIEWERS_GET, "editor": 409, "admin": 409},
    },  # fmt: skip
    # Bylines: answered by the named author (or an Editor); without a request to answer, every
    # signed-in role is sent back to the dashboard with a message (tests/editor/test_bylines.py).
    "authorship_confirm": {
        "GET": POST_ONLY_GET,
        "POST": {
            "anonymous": LOGIN,
            "own": INTO_APP,
            "other": INTO_APP,
            "editor": INTO_APP,
            "admin": INTO_APP,
        },
    },  # fmt: skip
    "authorship_decline": {
        "GET": POST_ONLY_GET,
        "POST": {
            "anonymous": LOGIN,
            "own": INTO_APP,
            "other": INTO_APP,
            "editor": INTO_APP,
            "admin": INTO_APP,
        },
    },  # fmt: skip
    # People (editor/people.py): Admins only.
    "people": {"GET": ADMIN_ONLY, "POST": POST_ONLY_GET},
    "people_invite": {"GET": POST_ONLY_GET, "POST": {**ADMIN_ONLY, "admin": INTO_APP}},
    "people_change": {"GET": POST_ONLY_GET, "POST": {**ADMIN_ONLY, "admin": INTO_APP}},
}


def editor_patterns() -> list[URLPattern]:
    """The URL patterns of the `editor` namespace, found by walking the root URLconf."""
    found: list[URLPattern] = []

    def walk(patterns, inside: bool) -> None:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, inside or entry.namespace == "editor")
            elif inside:
                found.append(entry)

    walk(get_resolver().url_patterns, False)
    return found


def _post_data(name: str, note: Note) -> dict:
    """A well-formed request body for each state-changing URL (so refusals are permissions)."""
    note.refresh_from_db()
    if name == "edit":
        return {
            "data": {
                "base_version": note.version, "title": note.title, "body": "Edited.",
                "summary": "", "tags": "", "date": note.date.strftime("%Y-%m-%dT%H:%M"),
                "show_title": "unknown", "action": "save",
            }
        }  # fmt: skip
    if name == "autosave":
        payload = {"body": "Typing.", "base_version": note.version}
        return {"data": json.dumps(payload), "content_type": "application/json"}
    if name == "preview":
        return {"data": {"content": "$x$"}}
    if name == "image_upload":
        return {"data": {"image": png_upload()}}
    if name == "new":
        return {"data": {"title": "Another"}}
    if name == "people_invite":
        return {"data": {"name": "Matrix Person", "email": "matrix@example.org", "role": "author"}}
    if name == "people_change":  # the user_id is the own Author's: a role they already have
        return {"data": {"action": "role", "role": "author"}}
    if name == "bibliographies":  # a new name each time: an existing name is refused
        return {"data": {"name": f"matrix-{next(_bib_names)}", "text": "@misc{k, title={T}}"}}
    if name == "bibliography":
        return {"data": {"text": "@misc{k, title={Replaced}}"}}
    if name == "bibliography_public":
        return {"data": {"public": "1"}}
    return {"data": {}}


_bib_names = itertools.count()


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    # The matrix uploads images (editor:image_upload): they go to this test's own folder.
    settings.MEDIA_ROOT = tmp_path


def test_every_editor_url_has_a_rule():
    """The URLconf's editor URLs and the rule table list the same names."""
    names = [pattern.name for pattern in editor_patterns()]
    assert names and None not in names
    assert set(names) == set(RULES), "add a rule for every editor URL"
    for rules in RULES.values():
        assert set(rules) == {"GET", "POST"}
        assert all(set(by_role) == set(ROLES) for by_role in rules.values())


@pytest.mark.slow
@pytest.mark.django_db
def test_permission_matrix(author, other_author, editor_user, admin_user, note):
    """Each editor URL × role × GET/POST is allowed or refused as RULES says."""
    users = {"own": author, "other": other_author, "editor": editor_user, "admin": admin_user}
    revision = note.revisions.first()
    bibfile = bibfile_create(user=author, name="bib/own.bib", raw="@misc{k, title={T}}").bibfile
    failures = []
    for pattern in editor_patterns():
        params = {
            "note_id": note.pk, "revision_id": revision.pk, "bibfile_id": bibfile.pk,
            "user_id": author.pk, "author_id": author.author.pk,
        }  # fmt: skip
        kwargs = {key: params[key] for key in pattern.pattern.converters}
        url = reverse(f"editor:{pattern.name}", kwargs=kwargs)
        for method in ("GET", "POST"):
            for role in ROLES:
                client = Client()
                if role != "anonymous":
                    client.force_login(users[role])
                if method == "GET":
                    response = client.get(url)
                else:
                    response = client.post(url, **_post_data(pattern.name, note))
                expected = RULES[pattern.name][method][role]
                location = response.get("Location", "")
                if expected == LOGIN:
                    ok = response.status_code == 302 and location.startswith("/accounts/login/")
                elif expected == INTO_APP:
                    ok = response.status_code == 302 and location.startswith("/write/")
                else:
                    ok = response.status_code == expected
                if not ok:
                    failures.append(f"{method} {url} as {role}: {response.status_code} {location}")
                if Note.objects.trashed().filter(pk=note.pk).exists():
                    services.note_restore(note_id=note.pk, user=admin_user)
    assert not failures, "\n".join(failures)


def test_a_new_url_without_a_rule_fails(settings):
    """A URL added to the editor namespace without a rule makes the check fail."""
    import types

    from django.urls import include, path

    import editor.urls

    extra = path("<int:note_id>/secret/", lambda request, note_id: None, name="secret")
    root = types.ModuleType("extended_urls")
    root.urlpatterns = [
        path("write/", include(([*editor.urls.urlpatterns, extra], "editor"))),
    ]
    settings.ROOT_URLCONF = root
    assert "secret" in [pattern.name for pattern in editor_patterns()]
    with pytest.raises(AssertionError, match="add a rule"):
        test_every_editor_url_has_a_rule()


# --- Rules inside the editor's form: who names whom -------------------------------------------


def _coauthored(note, author, other_author, editor_user) -> Note:
    """`note` (Ada's) with Bert as a confirmed co-author, added by an Editor."""
    from notes import services

    return services.note_save(
        note_id=note.pk, user=editor_user, base_version=note.version,
        fields={"authors": [author.author.handle, services.author_for_user(other_author).handle]},
    ).note  # fmt: skip


@pytest.mark.django_db
def test_naming_an_author_without_an_account_through_the_form(
    author, other_author, editor_user, admin_user, note
):
    """Role matrix of the editor's form POST naming an imported author first: the note's
    Authors get the page back (400) with the error on the authors field and nothing saved;
    Editors and Admins save it; others are refused as for any edit."""
    from django.contrib.auth.models import User

    from notes import services
    from notes.models import Author
    from tests.editor.forms import editor_form

    Author.objects.create(name="Imported Person", handle="imported-person")
    note = _coauthored(note, author, other_author, editor_user)
    own = services.working_state(note)["authors"]
    outsider = User.objects.create_user("carol")
    outsider.groups.add(author.groups.first())
    users = {
        "anonymous": None, "other": outsider, "own": author, "co-author": other_author,
        "editor": editor_user, "admin": admin_user,
    }  # fmt: skip
    expected = {
        "anonymous": LOGIN, "other": 404, "own": 400, "co-author": 400,
        "editor": INTO_APP, "admin": INTO_APP,
    }  # fmt: skip
    failures = []
    for role, user in users.items():
        client = Client()
        if user is not None:
            client.force_login(user)
        note.refresh_from_db()
        wanted = ", ".join(["imported-person", *own])
        response = client.post(f"/write/{note.pk}/", editor_form(note, authors=wanted))
        location = response.get("Location", "")
        saved = services.working_state(Note.objects.get(pk=note.pk))["authors"]
        if expected[role] == LOGIN:
            ok = location.startswith("/accounts/login/") and saved == own
        elif expected[role] == INTO_APP:
            ok = location.startswith("/write/") and saved == ["imported-person", *own]
        elif expected[role] == 400:
            page = response.content.decode()
            field = page.split('for="id_authors"', 1)[-1].split("</div>", 1)[0]
            ok = (
                response.status_code == 400
                and "errorlist" in field
                and "Imported Person (imported-person)" in field
                and saved == own
            )
        else:
            ok = response.status_code == expected[role] and saved == own
        if not ok:
            failures.append(f"{role}: {response.status_code} {location} {saved}")
        if saved != own:
            current = Note.objects.get(pk=note.pk)
            services.note_save(
                note_id=note.pk, user=editor_user, base_version=current.version,
                fields={"authors": own},
            )  # fmt: skip
    assert not failures, "\n".join(failures)


@pytest.mark.django_db
def test_the_authors_field_offers_an_author_only_people_who_can_confirm(author, editor_user, note):
    """The handles offered to an Author leave out authors without an account; an Editor's
    list has them."""
    from notes.models import Author

    Author.objects.create(name="Imported Person", handle="imported-person")
    for user, offered in ((author, False), (editor_user, True)):
        client = Client()
        client.force_login(user)
        page = client.get(f"/write/{note.pk}/").content.decode()
        options = page.split('id="editor-author-options"', 1)[1].split("</datalist>", 1)[0]
        assert ('value="imported-person"' in options) is offered
        assert f'value="{author.author.handle}"' in options


# --- Taken off the authors: access ends at once, on every side endpoint ------------------------


def _side_requests(note: Note, revision_ids: list[int]) -> dict:
    """name → (method, url, request kwargs) for every editor endpoint that takes the note."""
    note.refresh_from_db()
    base = f"/write/{note.pk}/"
    newest, older = revision_ids[-1], revision_ids[0]
    numbers = sorted(note.revisions.values_list("number", flat=True))
    return {
        "editor page": ("get", base, {}),
        "save": ("post", base, _post_data("edit", note)),
        "autosave": ("post", f"{base}autosave/", _post_data("autosave", note)),
        "preview": ("post", f"{base}preview/", _post_data("preview", note)),
        "revisions": ("get", f"{base}revisions/", {}),
        "diff": ("get", f"{base}revisions/?a={numbers[0]}&b={numbers[-1]}", {}),
        "restore": ("get", f"{base}revisions/{older}/restore/", {}),
        "restore post": ("post", f"{base}revisions/{newest}/restore/", {}),
        "image upload": ("post", f"{base}images/", _post_data("image_upload", note)),
        "cite search": ("get", f"{base}cite-search/?q=x", {}),
        "labels": ("get", f"{base}labels/", {}),
    }


@pytest.mark.django_db
@pytest.mark.parametrize("state", ["draft", "published"])
def test_a_coauthor_taken_off_loses_every_side_endpoint_at_once(
    state, author, other_author, editor_user, note
):
    """Bert, a co-author, is taken off by an Editor: on a draft (the row) or in a published
    note's working copy (readers still see his name until it is published). From then on every
    editor endpoint of the note, and the note's draft images, are a 404 for him, while Ada
    keeps them all."""
    from images.services import image_upload
    from notes import services
    from tests.images.samples import png_upload

    note = _coauthored(note, author, other_author, editor_user)
    note = services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Text."}
    ).note
    if state == "published":
        note = services.note_publish(note_id=note.pk, user=author, base_version=note.version).note
    draft_image = image_upload(note_id=note.pk, user=author, uploaded_file=png_upload()).image
    note = services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"body": f"Text.\n\n{draft_image.markdown}"},
    ).note  # fmt: skip
    bert, ada = Client(), Client()
    bert.force_login(other_author)
    ada.force_login(author)
    assert bert.get(f"/write/{note.pk}/").status_code == 200
    services.note_save(
        note_id=note.pk, user=editor_user, base_version=note.version,
        fields={"authors": [author.author.handle]},
    )  # fmt: skip
    note.refresh_from_db()
    if state == "published":
        live = Client().get(f"/notes/{note.slug}/").content.decode()
        assert "bert" in live  # the live byline changes when the change is published
    revisions = list(note.revisions.order_by("number").values_list("pk", flat=True))
    failures = []
    for name in _side_requests(note, revisions):
        for who, client, expected in (("removed co-author", bert, {404}), ("Ada", ada, {200, 302})):
            method, url, kwargs = _side_requests(note, revisions)[name]  # the current version
            status = getattr(client, method)(url, **kwargs).status_code
            if status not in expected:
                failures.append(f"{name} as {who}: {status}")
    if bert.get(draft_image.url).status_code != 404:
        failures.append("the draft's image as the removed co-author")
    if ada.get(draft_image.url)["Cache-Control"] != "private, no-store":
        failures.append("the draft's image as the first author")
    assert not failures, "\n".join(failures)
