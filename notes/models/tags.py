"""Tags, and the names they are stored under."""

from __future__ import annotations

import datetime as dt

from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.text import slugify

from .rendered import Status


class TagQuerySet(models.QuerySet):
    def _notes(self):
        # The notes module defines Note with its tags relation, so it imports this one.
        return self.model._meta.get_field("notes").related_model.objects

    def public(self, now: dt.datetime | None = None):
        """Tags readers may see: those a published, due note carries. A tag typed on a draft
        or a scheduled note stays private until that note goes live, as a Hugo term exists only
        through the pages that carry it (draft tags had public pages)."""
        return self.filter(
            models.Exists(self._notes().published(now).filter(tags=models.OuterRef("pk")))
        )

    def offered_to(self, user):
        """Tags the editor's autocomplete offers `user`: the public ones and those on notes the
        user may edit. Editors and admins may edit every note, so they are offered every tag."""
        if not user.is_authenticated or not user.is_active:
            return self.public()
        if user.is_superuser or user.has_perm("notes.edit_any_note"):
            return self.all()
        own = self._notes().editable_by(user).filter(tags=models.OuterRef("pk"))
        published = self._notes().published().filter(tags=models.OuterRef("pk"))
        return self.filter(models.Exists(published) | models.Exists(own))

    def with_published_counts(self, now: dt.datetime | None = None):
        """The public tags, with `count` (their published notes), in name order regardless of
        case, as Hugo's `.Data.Terms.Alphabetical` lists them ("Agentic Skills", "AI and Jobs")."""
        now = now or timezone.now()
        published = Q(notes__status=Status.PUBLISHED, notes__date__lte=now, notes__has_body=True)
        return (
            self.annotate(count=models.Count("notes", filter=published, distinct=True))
            .filter(count__gt=0)
            .order_by(Lower("name"), "name")
        )


class Tag(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=120, unique=True, allow_unicode=True)

    objects = TagQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        if not self.slug:
            # Hugo's urlize: lower case, spaces to hyphens; the theme's tag URLs use it.
            self.slug = slugify(self.name, allow_unicode=True) or "tag"
        super().save(*args, **kwargs)


def tag_name(name: str) -> str:
    """A tag's name as it is stored: spaces collapsed."""
    return " ".join(str(name).split())


def tag_names(names) -> list[str]:
    """Tag names as stored, in their order, each once, blank ones left out."""
    return list(dict.fromkeys(tag_name(name) for name in names if str(name).strip()))
