"""Documents: loading (PDF, HTML, Markdown, text), file-name metadata and chunking; shared by ingester and web path."""
