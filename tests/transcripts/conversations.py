"""One conversation written in each transcript format, and what it reads to."""

from __future__ import annotations

import json

from oloproof.transcripts import Message, ToolCall, ToolResult, Transcript

QUESTION = "How long do refunds take, and where is order 7?"
ANSWER = "Refunds take 5 days; order 7 has shipped."
KB = json.dumps([{"doc_id": "kb-3", "text": "Refunds take 5 days."},
                 {"doc_id": "kb-9", "text": "Refunds go to the original card."}])
ORDER = json.dumps({"status": "shipped"})
KB_ARGS = {"query": "refund time"}
ORDER_ARGS = {"order": 7}

VENDOR = [
    {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_call", "tool_call_id": "c1", "name": "search_kb", "arguments": KB_ARGS},
        {"type": "tool_call", "tool_call_id": "c2", "name": "order_status", "arguments": ORDER_ARGS},
    ]},
    {"role": "tool", "tool_call_id": "c1", "content": [{"type": "tool_result", "tool_result": KB}]},
    {"role": "tool", "tool_call_id": "c2", "content": [{"type": "tool_result", "tool_result": ORDER}]},
    {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]},
]

CHAT = [
    {"role": "user", "content": QUESTION},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search_kb", "arguments": json.dumps(KB_ARGS)}},
        {"id": "c2", "type": "function", "function": {"name": "order_status", "arguments": json.dumps(ORDER_ARGS)}},
    ]},
    {"role": "tool", "tool_call_id": "c1", "content": KB},
    {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": ORDER}]},
    {"role": "assistant", "content": ANSWER, "refusal": None},
]

RESPONSES = [
    {"role": "user", "content": QUESTION},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
    {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "search_kb", "arguments": json.dumps(KB_ARGS)},
    {"type": "function_call", "id": "fc_2", "call_id": "c2", "name": "order_status",
     "arguments": json.dumps(ORDER_ARGS)},
    {"type": "function_call_output", "call_id": "c1", "output": KB},
    {"type": "function_call_output", "call_id": "c2", "output": ORDER},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ANSWER}]},
]

ANTHROPIC = [
    {"role": "user", "content": QUESTION},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Two lookups.", "signature": "x"},
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "c1", "name": "search_kb", "input": KB_ARGS},
        {"type": "tool_use", "id": "c2", "name": "order_status", "input": ORDER_ARGS},
    ]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": KB},
        {"type": "tool_result", "tool_use_id": "c2", "content": [{"type": "text", "text": ORDER}]},
    ]},
    {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]},
]

FORMATS = {"vendor": VENDOR, "chat": CHAT, "responses": RESPONSES, "anthropic": ANTHROPIC}

EXPECTED = Transcript(messages=(
    Message(role="user", texts=(QUESTION,)),
    Message(role="assistant", texts=("Let me look.",), tool_calls=(
        ToolCall(name="search_kb", id="c1", arguments=KB_ARGS),
        ToolCall(name="order_status", id="c2", arguments=ORDER_ARGS),
    )),
    Message(role="tool", tool_results=(ToolResult(call_id="c1", content=KB),)),
    Message(role="tool", tool_results=(ToolResult(call_id="c2", content=ORDER),)),
    Message(role="assistant", texts=(ANSWER,)),
))

# A file search: structured results in the vendor's and the Responses formats, their JSON text in the others.
HITS = [
    {"file_id": "file-1", "file_name": "refunds.md", "score": 0.9,
     "content": [{"type": "text", "text": "Refunds take 5 days."}]},
    {"file_id": "file-2", "score": 0.5, "content": [{"type": "text", "text": "Cards are refunded."}]},
]
SEARCH_ARGS = {"queries": ["refund time"]}

SEARCH_FORMATS = {
    "vendor": [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": [
            {"type": "tool_call", "tool_call_id": "fs_1", "name": "file_search", "arguments": SEARCH_ARGS}]},
        {"role": "tool", "tool_call_id": "fs_1", "content": [{"type": "tool_result", "tool_result": HITS}]},
        {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]},
    ],
    "responses": [
        {"role": "user", "content": [{"type": "input_text", "text": QUESTION}]},
        {"type": "file_search_call", "id": "fs_1", "status": "completed", "queries": ["refund time"], "results": [
            {"file_id": "file-1", "filename": "refunds.md", "score": 0.9, "text": "Refunds take 5 days.",
             "attributes": {}},
            {"file_id": "file-2", "filename": None, "score": 0.5, "text": "Cards are refunded."},
        ]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ANSWER}]},
    ],
    "chat": [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "fs_1", "type": "function",
             "function": {"name": "file_search", "arguments": json.dumps(SEARCH_ARGS)}}]},
        {"role": "tool", "tool_call_id": "fs_1", "content": json.dumps(HITS)},
        {"role": "assistant", "content": ANSWER},
    ],
    "anthropic": [
        {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "fs_1", "name": "file_search",
                                           "input": SEARCH_ARGS}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "fs_1", "content": json.dumps(HITS)}]},
        {"role": "assistant", "content": ANSWER},
    ],
}
