# syntax=docker/dockerfile:1
# Stage 1: the locked npm packages, reduced to the files SciDraft serves (static/vendor/), and
# the note editor bundled from editor/codemirror/ (esbuild, a locked dev dependency).
FROM node:20-bookworm-slim AS assets
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY scripts/vendor-assets.sh scripts/build-editor.mjs scripts/build-citations.mjs scripts/licences.mjs scripts/
COPY bibliography/js bibliography/js
COPY editor/codemirror editor/codemirror
RUN sh scripts/vendor-assets.sh

# Stage 2: the application, its locked Python dependencies and the collected static files.
FROM python:3.11-slim AS app
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    STATIC_ROOT=/app/staticfiles \
    MEDIA_ROOT=/data/media
WORKDIR /app
RUN useradd --system --create-home --uid 10001 scidraft \
 && mkdir -p /data/media && chown scidraft /data/media
COPY pyproject.toml requirements.lock README.md manage.py ./
COPY scidraft scidraft
COPY notes notes
COPY bibliography bibliography
COPY accounts accounts
COPY ops ops
COPY editor editor
COPY images images
COPY hugosite hugosite
COPY collaboration collaboration
COPY templates templates
COPY static static
COPY demo demo
COPY --from=assets /build/static/vendor static/vendor
RUN pip install -c requirements.lock . \
 && python -c "from scidraft.markup.code import highlight_css; print(highlight_css())" > static/vendor/pygments.css
# collectstatic only reads files; the key and database below exist for this step alone.
RUN SECRET_KEY=collectstatic-build-step-only ALLOWED_HOSTS=build DATABASE_URL=sqlite:////tmp/build.sqlite3 \
    python manage.py collectstatic --noinput
USER scidraft
# 8000: gunicorn (the CMD); 8001: daphne, the live editing socket (compose's "live" service
# runs it as its command).
EXPOSE 8000 8001
COPY gunicorn.conf.py ./
# /healthz over loopback (ops/healthcheck.py sends a Host that ALLOWED_HOSTS accepts); the
# start period covers the migrations CMD runs first.
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
  CMD ["python", "-m", "ops.healthcheck"]
CMD ["sh", "-c", "python manage.py migrate --noinput && exec gunicorn scidraft.wsgi --config gunicorn.conf.py"]
