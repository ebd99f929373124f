"""A loopback stand-in for Microsoft Edge's speech service (the websocket the ``edge-tts`` package speaks to), with
aiohttp's server: it takes the speech config and the SSML, records the text, and answers as the service does
(``turn.start``, the audio in binary frames with a length-prefixed header, ``turn.end``). Tests point the package at
it by writing :func:`EdgeTTS.sitecustomize` into a folder first on the child's ``PYTHONPATH``.

    with EdgeTTS(audio=b"ID3 ...") as edge:
        ...  edge.texts: the text of each SSML request; edge.fail = True: the next one is closed unanswered
"""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path


class EdgeTTS:
    def __init__(self, audio: bytes = b"ID3\x04\x00 fake mp3 frames"):
        self.audio, self.texts, self.voices, self.fail = audio, [], [], False
        self.port = 0

    def sitecustomize(self, folder: Path) -> Path:
        """A ``sitecustomize.py`` in ``folder`` that points edge-tts here; the folder, for PYTHONPATH."""
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "sitecustomize.py").write_text(
            "import edge_tts.communicate\n"
            f"edge_tts.communicate.WSS_URL = 'ws://127.0.0.1:{self.port}/edge/v1?TrustedClientToken=test'\n")
        return folder

    async def _speech(self, request):
        from aiohttp import WSMsgType, web

        socket = web.WebSocketResponse()
        await socket.prepare(request)
        async for message in socket:
            if message.type != WSMsgType.TEXT or "Path:ssml" not in message.data:
                continue
            if self.fail:
                self.fail = False
                await socket.close()
                break
            ssml = message.data.partition("\r\n\r\n")[2]
            self.voices.append((re.search(r"<voice name='([^']+)'>", ssml) or [None, ""])[1])
            self.texts.append(re.sub(r"<[^>]+>", "", ssml).strip())
            head = "X-RequestId:test\r\nContent-Type:application/json; charset=utf-8\r\n"
            await socket.send_str(f"{head}Path:turn.start\r\n\r\n{{}}")
            header = b"X-RequestId:test\r\nContent-Type:audio/mpeg\r\nPath:audio\r\n"  # its length, then it
            for start in range(0, len(self.audio), 4096):
                await socket.send_bytes(len(header).to_bytes(2, "big") + header + self.audio[start:start + 4096])
            await socket.send_str(f"{head}Path:turn.end\r\n\r\n{{}}")
        return socket

    def __enter__(self):
        from aiohttp import web

        self.loop = asyncio.new_event_loop()
        started = threading.Event()

        async def serve():
            app = web.Application()
            app.router.add_get("/edge/v1", self._speech)
            self.runner = web.AppRunner(app)
            await self.runner.setup()
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            await site.start()
            self.port = site._server.sockets[0].getsockname()[1]
            started.set()

        self.thread = threading.Thread(target=lambda: (self.loop.run_until_complete(serve()), self.loop.run_forever()),
                                       daemon=True)
        self.thread.start()
        started.wait(10)
        return self

    def __exit__(self, *exc):
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
