"""Two writers at once on a file-based SQLite database, run as its own process by
test_settings (the test database is in memory): one thread uploads images into a note while
another stores live updates of the same note, as an editor's socket does. Prints, as JSON,
how many writes each thread made and the errors it met.

    DATABASE_URL=sqlite:////tmp/x.sqlite3 python -m tests.scidraft.sqlite_writers /tmp/media
"""

from __future__ import annotations

import json
import os
import sys
import threading

import django

ROUNDS = 40


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection

    from collaboration import documents
    from images.services import image_upload
    from notes import services
    from tests.collaboration.editors import stored_doc, typed
    from tests.images.samples import image_bytes, upload

    settings.MEDIA_ROOT = sys.argv[1]
    call_command("migrate", verbosity=0)
    user = User.objects.create_superuser("root", "root@example.org", "pw")
    note = services.note_create(user=user, title="Together")
    doc = stored_doc(note.pk)
    updates = [typed(doc, f"word {index} ") for index in range(ROUNDS)]
    pictures = [image_bytes("PNG", color=(index, 30, 30)) for index in range(ROUNDS)]
    connection.close()
    start = threading.Barrier(2)
    report = {"uploads": 0, "updates": 0, "errors": []}

    def uploads():
        start.wait()
        for index, data in enumerate(pictures):
            try:
                image_upload(note_id=note.pk, user=user, uploaded_file=upload(f"{index}.png", data))
                report["uploads"] += 1
            except Exception as error:  # noqa: BLE001 - reported to the test
                report["errors"].append(f"upload: {error!r}")
        connection.close()

    def live():
        start.wait()
        for data in updates:
            try:
                documents.update_store(note.pk, data, user.pk)
                report["updates"] += 1
            except Exception as error:  # noqa: BLE001 - reported to the test
                report["errors"].append(f"update: {error!r}")
        connection.close()

    threads = [threading.Thread(target=uploads), threading.Thread(target=live)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report["body"] = documents.document(note.pk).texts()[1]
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main()
