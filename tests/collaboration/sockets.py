"""A bare WebSocket client (RFC 6455, enough for tests): a real TCP connection to a real
server, binary frames masked as a browser's are, close codes read back."""

from __future__ import annotations

import asyncio
import base64
import os
import struct
from urllib.parse import urlsplit


class Socket:
    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        self.close_code: int | None = None

    @classmethod
    async def open(cls, url: str, *, origin: str, cookie: str = "") -> Socket:
        parts = urlsplit(url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Origin: {origin}\r\n" + (f"Cookie: {cookie}\r\n" if cookie else "") + "\r\n"
        )
        writer.write(request.encode())
        await writer.drain()
        status = await reader.readline()
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        if b" 101 " not in status:
            writer.close()
            raise ConnectionRefusedError(status.decode().strip())
        return cls(reader, writer)

    async def send(self, data: bytes, opcode: int = 2) -> None:
        mask = os.urandom(4)
        length = len(data)
        if length < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.writer.write(header + mask + masked)
        await self.writer.drain()

    async def receive(self, timeout: float = 5) -> bytes | None:
        """The next binary message; None once the server closed (close_code says how)."""
        while True:
            first, second = await asyncio.wait_for(self.reader.readexactly(2), timeout)
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", await self.reader.readexactly(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", await self.reader.readexactly(8))
            payload = await self.reader.readexactly(length)
            opcode = first & 0x0F
            if opcode == 8:
                self.close_code = struct.unpack("!H", payload[:2])[0] if payload else 1005
                return None
            if opcode == 9:  # ping
                await self.send(payload, opcode=10)
                continue
            if opcode == 2:
                return payload

    async def close(self) -> None:
        try:
            await self.send(struct.pack("!H", 1000), opcode=8)
        finally:
            self.writer.close()
