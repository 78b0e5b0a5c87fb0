"""URLs for machines: RSS, the sitemap index and its files, robots.txt, index.json
(docs/theme.md#search-and-the-search-index, #feeds-sitemap-and-meta).

Included before notes.urls, without a namespace: the names are global (`rss`, `tag_rss`,
`sitemap`, `sitemap_site`, `sitemap_chunk`, `robots_txt`, `index_json`).
"""

from django.urls import re_path

from scidraft.site.caching import cached_page

from . import feeds, sitemaps

urlpatterns = [
    re_path(r"^index\.xml$", cached_page(feeds.site_rss), name="rss"),
    re_path(r"^tags/(?P<slug>[-\w]+)/index\.xml$", cached_page(feeds.tag_rss), name="tag_rss"),
    re_path(r"^index\.json$", cached_page(feeds.index_json), name="index_json"),
    re_path(r"^sitemap\.xml$", cached_page(sitemaps.sitemap_index), name="sitemap"),
    re_path(r"^sitemap-site\.xml$", cached_page(sitemaps.sitemap_site), name="sitemap_site"),
    re_path(
        r"^sitemap-(?P<kind>notes|tags|pages)-(?P<number>\d+)\.xml$",
        cached_page(sitemaps.sitemap_chunk),
        name="sitemap_chunk",
    ),
    re_path(r"^robots\.txt$", cached_page(feeds.robots_txt), name="robots_txt"),
]
