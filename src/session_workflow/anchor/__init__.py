"""The control anchor: its text model, the injected part, reports and the writer.

``text`` (the pure text model: sections, fit, classification), ``frame`` (the quoted frame around injected file
content: ``QUOTE``, ``quote``, ``opening``, ``frame(name, text)``, ``frame_head(name, anchor)``: file content framed
as the hook frames it; use them, do not re-write them), ``discover`` (listing, bounded reads, ranking), ``choice``
(the trust view, tiers, the session's own anchor, parallel tracks), ``block`` (the injected text, pure), ``part``
(the SessionStart part, the untrusted notes, telemetry), ``report`` (listings, head-fit), ``template`` (the new
anchor's sections and prompts, ``is_unfilled``: a HEAD that still holds only them), ``registry`` (trust and session
affinity, outside the repo: identity, else the SHA-256 of the same bytes; the copy of the last version; each
session's list of kept anchors; ``vouch`` is the one call every writer path makes), ``writer`` (new, step, write,
adopt, restore, close: the file operations).
"""
