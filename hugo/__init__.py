"""The Hugo round trip: a site that uses the SciDraft Hugo theme moves in and out again.

- reading: the site's files as plain data (model-free, like scidraft.markup);
- loading: that data written to the database (config, bibliographies, notes, pages);
- importing: a whole site folder, with its data files and images (`import_hugo`);
- exporting: the database written back as a Hugo site (`export_hugo`);
- views: imported static/ files served at their original URLs;
- seeding: the demo site (demo/, a Hugo site) loaded the same way by `seed_demo`, never over a
  row a person changed (models.DemoRow records what it wrote).
"""
