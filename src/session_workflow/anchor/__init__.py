"""The control anchor: its text model, the injected part, reports and the writer."""
