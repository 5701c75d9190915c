# Package marker: jinja2 templates for schedgen, shipped as `schedgen.templates`.
