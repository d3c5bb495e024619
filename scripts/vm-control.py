#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copyright 2026 The aesmux Authors
"""The host's side of a VM script's guest: QEMU's monitor (QMP) and a
control channel the guest talks to (a virtio-serial port).

usage: vm-control.py QMP_SOCKET CONTROL_SOCKET LOG

Runs until QEMU exits. Meanwhile it counts the requests the virtio-crypto
device completed on its data queue and on its control queue (session
set-up and tear-down), from QEMU's own counters
(x-query-virtio-queue-status: used-idx, which wraps at 65536, read every
0.2 s so that no wrap is missed), and answers the guest's requests, one
line each, with one line:

  count LABEL        "ok DATA CONTROL": the totals so far; LOG gets
                     "count LABEL DATA CONTROL". Everything the guest sent
                     before it asked has completed (it waits for this
                     answer), so the difference between two counts is the
                     device's work in between.
  device_del ID      asks QEMU to remove the device ID (QMP device_del) and
                     answers "ok" once QMP took the command (the guest's
                     own driver sees the removal after that) or
                     "error TEXT"; LOG gets "device_del ID ok" or the error.

LOG gets "no-device" if the machine has no virtio-crypto device (requests
are then not counted, and every count is 0 0). Once the device is removed
its counts stay where they were.
"""
import json
import socket
import sys
import time


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile('rw')
        self.receive()  # the greeting
        self.execute('qmp_capabilities')

    def receive(self):
        while True:
            line = self.file.readline()
            if not line:
                raise EOFError('QMP closed')
            message = json.loads(line)
            if 'event' not in message:
                return message

    def execute(self, command, **arguments):
        request = {'execute': command}
        if arguments:
            request['arguments'] = arguments
        self.file.write(json.dumps(request) + '\n')
        self.file.flush()
        return self.receive()


def retry(connect, path):
    """connect(path), retried for 30 s while QEMU creates the socket."""
    for _ in range(300):
        try:
            return connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            time.sleep(0.1)
    raise SystemExit(f'vm-control: cannot connect to {path}')


def unix_socket(path):
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return sock


class Counter:
    """Total used-idx advances of each of the device's queues."""

    def __init__(self, qmp, path):
        self.qmp, self.path = qmp, path
        self.last = [None, None]
        self.total = [0, 0]

    def poll(self):
        for queue in (0, 1):
            reply = self.qmp.execute('x-query-virtio-queue-status',
                                     path=self.path, queue=queue)
            used = reply.get('return', {}).get('used-idx')  # none: removed
            if used is None:
                continue
            if self.last[queue] is not None:
                self.total[queue] += (used - self.last[queue]) % 65536
            self.last[queue] = used
        return self.total


def main():
    qmp_path, control_path, log_path = sys.argv[1:4]
    log = open(log_path, 'w', buffering=1)
    qmp = retry(Qmp, qmp_path)
    devices = qmp.execute('x-query-virtio').get('return', [])
    crypto = [d['path'] for d in devices if d.get('name') == 'virtio-crypto']
    counter = Counter(qmp, crypto[0]) if crypto else None
    if counter is None:
        print('no-device', file=log)
    control = retry(unix_socket, control_path)
    control.settimeout(0.2)
    pending = b''
    try:
        while True:
            total = counter.poll() if counter else [0, 0]
            try:
                data = control.recv(4096)
                if not data:
                    break
                pending += data
            except socket.timeout:
                continue
            while b'\n' in pending:
                line, pending = pending.split(b'\n', 1)
                words = line.decode(errors='replace').split()
                if not words:
                    continue
                if words[0] == 'count' and len(words) == 2:
                    total = counter.poll() if counter else [0, 0]
                    print(f'count {words[1]} {total[0]} {total[1]}', file=log)
                    reply = f'ok {total[0]} {total[1]}'
                elif words[0] == 'device_del' and len(words) == 2:
                    result = qmp.execute('device_del', id=words[1])
                    if 'error' in result:
                        reply = 'error ' + result['error'].get('desc', '?')
                    else:
                        reply = 'ok'
                    print(f'device_del {words[1]} {reply}', file=log)
                else:
                    reply = 'error unknown request'
                control.sendall((reply + '\n').encode())
    except (EOFError, OSError, json.JSONDecodeError):
        pass  # QEMU exited


if __name__ == '__main__':
    main()
