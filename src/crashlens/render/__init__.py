"""Renderers: each turns diagnoses into text or bytes for one audience. Nothing else prints."""
