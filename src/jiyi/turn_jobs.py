"""The facade's work on turns beyond the call that stored them: extraction of queued turns (a worker calls
process_pending), the messages of synchronous adds kept as evidence after the add has answered, and the turns a
process that died left unfinished, taken up at the next call. TurnJobs owns every task it starts; settle() waits
for them and the facade's close() (or the sync facade's exit hook) calls it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import timedelta

from jiyi import tracing
from jiyi.embedders.scheduler import embedding_lane
from jiyi.errors import Conflict, NotFound
from jiyi.records import Clock, Scope, StoredMessage, TurnRecord, TurnStatus
from jiyi.stores.base import MemoryStore
from jiyi.views import turn_item
from jiyi.write_path import EVIDENCE_PENDING, TRACEPARENT, WritePath

log = logging.getLogger(__name__)
RESUME_BATCH = 16  # abandoned turns taken up per claim
EXIT_SETTLE_SECONDS = 30.0  # at exit (of the interpreter or an event loop), how long the last adds' evidence may take


def lane_of(scope: Scope) -> str:
    """Passages of one user (else agent, else run) share a lane; lanes take turns at the embedding model."""
    if scope.user_id:
        return f"user:{scope.user_id}"
    return f"agent:{scope.agent_id}" if scope.agent_id else f"run:{scope.run_id}"


class TurnJobs:
    def __init__(self, store: MemoryStore, write_path: WritePath, clock: Clock) -> None:
        self.store = store
        self.write_path = write_path
        self.clock = clock
        self._turns_queued: asyncio.Event | None = None  # set when a turn is queued; a worker waits on it
        # Evidence of synchronous adds being kept after their answer, per embedding lane (user): a read in the same
        # lane waits for it, so what this process was told is searchable by the next search, as before.
        self._evidence: dict[str, set[asyncio.Task[TurnRecord]]] = {}
        self._orphaned: dict[str, list[tuple[TurnRecord, list[StoredMessage]]]] = {}
        self._resuming: asyncio.Task[int] | None = None  # the turns a dead process left, taken up at the first call

    def _lease_length(self) -> timedelta:
        return timedelta(seconds=self.write_path.settings.lease_seconds)

    # --- queued turns (async adds, retries): a worker's ---------------------------------------------------------

    def notify_queued_turns(self, event: asyncio.Event) -> None:
        self._turns_queued = event

    async def queue(self, turn: TurnRecord, stored: list[StoredMessage]) -> None:
        # The worker extracts it later, in a trace of its own: it links to the span of the add that queued it.
        if traceparent := tracing.traceparent():
            turn.options[TRACEPARENT] = traceparent
        await asyncio.to_thread(self.store.add_turn, turn, stored)
        if self._turns_queued is not None:
            self._turns_queued.set()

    async def retry_failed(self, event_id: str) -> TurnRecord:
        turn = await asyncio.to_thread(self.store.get_turn, event_id)
        if turn is None:
            raise NotFound(f"event {event_id} not found")
        if turn.status is not TurnStatus.FAILED:
            # A queued or retrying turn is the worker's: writing it here could hand one turn to two claimers.
            raise Conflict(f"event {event_id} is {turn_item(turn)['status']}: only a FAILED turn is retried")
        now = self.clock()
        turn.status, turn.next_attempt_at, turn.lease_until, turn.updated_at = TurnStatus.RETRY, now, None, now
        await asyncio.to_thread(self.store.save_turn, turn)
        if self._turns_queued is not None:
            self._turns_queued.set()
        return turn

    async def process_pending(self, limit: int) -> int:
        now = self.clock()
        turns = await asyncio.to_thread(self.store.claim_turns, now, now + self._lease_length(), limit)
        if not turns:
            return 0
        by_owner: dict[Scope, list[TurnRecord]] = {}
        for turn in turns:
            by_owner.setdefault(turn.scope, []).append(turn)

        async def run_in_order(owner_turns: list[TurnRecord]) -> None:
            for turn in owner_turns:
                await self.process_in_lane(turn)

        attempts = {turn.id: turn.attempts for turn in turns}
        try:
            async with self.write_path.leased(turns):
                await asyncio.gather(*(run_in_order(group) for group in by_owner.values()))
        except asyncio.CancelledError:
            self.release_unfinished(turns, attempts)
            raise
        return len(turns)

    async def process_in_lane(self, turn: TurnRecord, stored: list[StoredMessage] | None = None, *,
                              defer_evidence: bool = False) -> TurnRecord:
        with embedding_lane(lane_of(turn.scope)):
            return await self.write_path.process(turn, stored, defer_evidence=defer_evidence)

    def release_unfinished(self, turns: Sequence[TurnRecord], attempts: dict[str, int]) -> None:
        """Processing was cancelled (the server is stopping): the claimed turns not finished go back to the queue,
        due now, instead of waiting for their lease to run out. A turn whose outcome is being saved is left alone."""
        now = self.clock()
        for turn in turns:
            if turn.status is TurnStatus.PROCESSING:
                turn.attempts = attempts.get(turn.id, turn.attempts)
                turn.status = TurnStatus.RETRY if turn.attempts else TurnStatus.QUEUED
                turn.lease_until, turn.next_attempt_at, turn.updated_at = None, now, now
                self.store.save_turn(turn)

    # --- a synchronous add: processed while the caller waits, its evidence kept after -----------------------------

    async def process_now(self, turn: TurnRecord, stored: list[StoredMessage]) -> TurnRecord:
        """The caller waits for this turn: it is leased to us, so a worker leaves it alone unless we die. Its
        messages are kept as evidence after the answer (write_path.keep_evidence)."""
        turn.status = TurnStatus.PROCESSING
        turn.lease_until = self.clock() + self._lease_length()
        await asyncio.to_thread(self.store.add_turn, turn, stored)
        try:
            async with self.write_path.leased([turn]):
                turn = await self.process_in_lane(turn, stored, defer_evidence=True)
        except asyncio.CancelledError:
            self.release_unfinished([turn], {turn.id: 0})
            raise
        if EVIDENCE_PENDING in turn.options:
            self._keep_evidence_later(turn, stored)
        return turn

    def _keep_evidence_later(self, turn: TurnRecord, stored: list[StoredMessage]) -> None:
        lane = lane_of(turn.scope)

        async def keep() -> TurnRecord:
            with embedding_lane(lane):
                try:
                    async with self.write_path.leased([turn]):
                        return await self.write_path.keep_evidence(turn, stored)
                except asyncio.CancelledError:
                    # Only the end of the event loop cancels this (asyncio.run returning while an add's evidence
                    # is being kept, as when an AsyncMemory is never closed): the loop waits for cancelled tasks to
                    # finish, so finish, from the start (keeping evidence is idempotent), or the messages would stay
                    # unsearchable until a worker took the turn up. A second cancellation ends it.
                    task = asyncio.current_task()
                    if task is None or task.uncancel() > 0:
                        raise
                    try:
                        async with self.write_path.leased([turn]):
                            return await asyncio.wait_for(self.write_path.keep_evidence(turn, stored),
                                                          EXIT_SETTLE_SECONDS)
                    except TimeoutError:  # still leased: a worker takes the turn up when the lease runs out
                        log.warning("turn %s: its evidence was not kept before the event loop ended", turn.id)
                        return turn

        task = asyncio.get_running_loop().create_task(keep())
        pending = self._evidence.setdefault(lane, set())
        pending.add(task)

        def forget(done: asyncio.Task[TurnRecord]) -> None:
            pending.discard(done)
            if not pending and self._evidence.get(lane) is pending:
                del self._evidence[lane]
            if done.cancelled():  # its event loop ended first (asyncio.run per call): the next read here redoes it
                self._orphaned.setdefault(lane, []).append((turn, stored))

        task.add_done_callback(forget)

    async def turn(self, event_id: str) -> TurnRecord:
        """The turn, once this process has kept its messages as evidence if it is doing so (a moment more)."""
        turn = await asyncio.to_thread(self.store.get_turn, event_id)
        if turn is None:
            raise NotFound(f"event {event_id} not found")
        lane = lane_of(turn.scope)
        if EVIDENCE_PENDING in turn.options and (lane in self._evidence or lane in self._orphaned):
            await self.evidence_kept(turn.scope)
            turn = await asyncio.to_thread(self.store.get_turn, event_id) or turn
        return turn

    async def before_reading(self, scope: Scope) -> None:
        """Before a search or a context call: a dead process's turns are being taken up, and this process's earlier
        adds in the scope's lane are searchable."""
        self.resume_abandoned_once()
        await self.evidence_kept(scope)

    async def evidence_kept(self, scope: Scope | None = None) -> None:
        """Wait for the evidence of this process's earlier synchronous adds: of the scope's lane, or all of it."""
        lanes = [lane_of(scope)] if scope is not None and not scope.is_empty else [*self._evidence, *self._orphaned]
        for lane in lanes:
            for turn, stored in self._orphaned.pop(lane, []):
                self._keep_evidence_later(turn, stored)
        tasks = [task for lane in lanes for task in self._evidence.get(lane, ())]
        if tasks:
            await asyncio.gather(*(asyncio.shield(task) for task in tasks), return_exceptions=True)

    # --- the turns a process that died left unfinished ------------------------------------------------------------

    def resume_abandoned_once(self) -> None:
        """At the first add, search or context call, take up in the background the turns a process that died left
        unfinished (answered, but its messages not yet kept as evidence; or cut off mid-extraction), once their lease
        has run out, as a worker would: a script has none. Queued and retried turns are left to whoever processes
        them (a worker, process_pending)."""
        if self._resuming is None:
            self._resuming = asyncio.get_running_loop().create_task(self._resume_abandoned())

    async def _resume_abandoned(self) -> int:
        resumed = 0
        try:
            while turns := await asyncio.to_thread(self.store.claim_turns, self.clock(),
                                                   self.clock() + self._lease_length(), RESUME_BATCH,
                                                   abandoned_only=True):
                async with self.write_path.leased(turns):
                    for turn in turns:  # cut off in turn (the loop ends): taken up again once its lease runs out
                        await self.process_in_lane(turn)
                resumed += len(turns)
        except Exception:  # the store or the model is failing: the turns stay leased, a later process retries
            log.exception("could not take up the turns a process left unfinished")
        if resumed:
            log.info("took up %d turns a process left unfinished", resumed)
        return resumed

    async def settle(self) -> None:
        """Wait for the evidence of earlier adds and the turns of a dead process this one took up."""
        await self.evidence_kept()
        resuming = self._resuming  # started on this loop (an earlier asyncio.run's ended with its loop)
        if resuming is not None and not resuming.done() and resuming.get_loop() is asyncio.get_running_loop():
            await asyncio.gather(asyncio.shield(resuming), return_exceptions=True)
