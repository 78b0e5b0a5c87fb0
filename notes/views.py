from django.shortcuts import render

from scidraft.site.models import SiteSettings

from .models import Note


def note_index(request):
    """Published notes as a plain list of titles.

    A placeholder until the public feed arrives (issue 5): it links each note to its admin page
    and renders no note content, so nothing unrendered is ever shown to a reader.
    """
    notes = Note.objects.published().regular().in_feed_order().only("slug", "title", "date")
    return render(
        request,
        "notes/index.html",
        {"site": SiteSettings.objects.current(), "notes": notes},
    )
