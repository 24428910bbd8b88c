"""An agent's transcript, read from the formats agents are recorded in, and the context it retrieved.

Four formats read to one typed :class:`Transcript`: the vendor's agent messages,
OpenAI Chat Completions messages, OpenAI Responses API items and Anthropic
Messages. :func:`read_transcript` tells them apart or refuses; a malformed
transcript raises :class:`TranscriptError` naming the path inside it::

    from oloproof.transcripts import extract_context, read_transcript

    extraction = extract_context(read_transcript(messages))
    extraction.response, extraction.passages, extraction.not_applicable
"""

from oloproof._exceptions import TranscriptError
from oloproof.transcripts._anthropic import read_anthropic_messages
from oloproof.transcripts._chat import read_chat_messages
from oloproof.transcripts._context import FILE_SEARCH, ContextPassage, ContextTool, Extraction, extract_context
from oloproof.transcripts._detect import read_transcript
from oloproof.transcripts._model import Message, Role, ToolCall, ToolResult, Transcript
from oloproof.transcripts._responses import read_responses_items
from oloproof.transcripts._vendor import read_vendor_messages

__all__ = [
    "FILE_SEARCH",
    "ContextPassage",
    "ContextTool",
    "Extraction",
    "Message",
    "Role",
    "ToolCall",
    "ToolResult",
    "Transcript",
    "TranscriptError",
    "extract_context",
    "read_anthropic_messages",
    "read_chat_messages",
    "read_responses_items",
    "read_transcript",
    "read_vendor_messages",
]
