"""URLs for machines: RSS, sitemap, robots.txt, index.json
(docs/theme.md#search-and-the-search-index, #feeds-sitemap-and-meta).

Included before notes.urls, without a namespace: the names are global (`rss`, `tag_rss`,
`sitemap`, `robots_txt`, `index_json`).
"""

from django.urls import re_path

from scidraft.site.caching import cached_page

from . import feeds

urlpatterns = [
    re_path(r"^index\.xml$", cached_page(feeds.site_rss), name="rss"),
    re_path(r"^tags/(?P<slug>[-\w]+)/index\.xml$", cached_page(feeds.tag_rss), name="tag_rss"),
    re_path(r"^index\.json$", cached_page(feeds.index_json), name="index_json"),
    re_path(r"^sitemap\.xml$", cached_page(feeds.sitemap), name="sitemap"),
    re_path(r"^robots\.txt$", cached_page(feeds.robots_txt), name="robots_txt"),
]
