"""The console's words in English and Chinese. Every label is a key with both texts side by side, so a label cannot
exist in one language only (tests/ui/test_console_i18n.py also checks that every key a page uses is here).

The language follows the browser (Accept-Language) until the visitor picks one with the switch (a cookie).
"""

from __future__ import annotations

from typing import Any

LANGUAGES = ("en", "zh")
DEFAULT = "en"


def negotiate(accept_language: str | None, chosen: str | None = None) -> str:
    """The visitor's choice if any, else the first of the browser's languages (by q-value) the console speaks."""
    if chosen in LANGUAGES:
        return str(chosen)
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary in LANGUAGES and quality > 0:
            ranked.append((-quality, index, primary))
    return min(ranked)[2] if ranked else DEFAULT


class Translator:
    def __init__(self, lang: str) -> None:
        self.lang = lang if lang in LANGUAGES else DEFAULT
        self._column = LANGUAGES.index(self.lang)

    def __call__(self, key: str, **params: Any) -> str:
        """The text of `key` (KeyError when there is none: a page must not show a key), with {params} filled in."""
        text = MESSAGES[key][self._column]
        return text.format(**params) if params else text

    def has(self, key: str) -> bool:
        return key in MESSAGES


MESSAGES: dict[str, tuple[str, str]] = {
    "app.name": ("jiyi console", "jiyi 记忆控制台"),
    "footer.text": ("jiyi {version} · console pages are served by the jiyi server itself; nothing is loaded from "
                    "elsewhere", "jiyi {version} · 控制台页面由 jiyi 服务本身提供，不从其他地方加载任何内容"),
    # navigation and who is signed in
    "nav.home": ("Home", "首页"),
    "nav.users": ("Users", "用户"),
    "nav.my_memories": ("My memories", "我的记忆"),
    "nav.language": ("Language", "语言"),
    "who.admin": ("Signed in with the admin key", "已用管理员密钥登录"),
    "who.user": ("Signed in as user {user}", "已登录：用户 {user}"),
    "who.agent": ("agent {agent}", "角色 {agent}"),
    "who.read_only": ("read only", "只读"),
    "who.open": ("Open server (no keys configured)", "开放服务（未配置密钥）"),
    "tab.overview": ("Overview", "概览"),
    "tab.memories": ("Memories", "记忆"),
    "tab.search": ("Search", "检索"),
    "tab.entities": ("People & things", "人物与事物"),
    "scope.user": ("User {user}", "用户 {user}"),
    "scope.agent": ("agent {agent}", "角色 {agent}"),
    "scope.run": ("run {run}", "会话 {run}"),
    # actions
    "action.login": ("Sign in", "登录"),
    "action.logout": ("Sign out", "退出登录"),
    "action.filter": ("Apply", "筛选"),
    "action.clear": ("Clear", "清除"),
    "action.search": ("Search", "检索"),
    "action.explain": ("Explain recall", "解释召回过程"),
    "action.save": ("Save", "保存"),
    "action.delete": ("Delete", "删除"),
    "action.restore": ("Restore", "恢复"),
    "action.promote": ("Promote to core", "提升为核心记忆"),
    "action.retry": ("Retry", "重试"),
    "action.retry_all": ("Retry all failed turns", "重试所有失败的对话轮次"),
    "action.rename": ("Rename", "改名"),
    "action.merge": ("Merge", "合并"),
    "action.close_relation": ("Close", "结束"),
    # login
    "login.title": ("Sign in to the jiyi console", "登录 jiyi 记忆控制台"),
    "login.explain": ("This server needs an API key. Enter it once: the browser keeps only a session cookie, "
                      "never the key.", "此服务需要 API 密钥。只需输入一次：浏览器只保存会话 Cookie，不保存密钥本身。"),
    "login.key": ("API key", "API 密钥"),
    "login.hint": ("The admin key sees every user; a user's key sees only that user's memories. Keys come from "
                   "`jiyi keys create`, JIYI_API_KEYS or JIYI_ADMIN_API_KEY.",
                   "管理员密钥可查看所有用户；用户密钥只能查看该用户自己的记忆。密钥来自 `jiyi keys create`、"
                   "JIYI_API_KEYS 或 JIYI_ADMIN_API_KEY。"),
    # users
    "users.title": ("Users", "用户"),
    "users.filter": ("Find a user", "查找用户"),
    "users.filter_hint": ("part of a user id", "用户 ID 的一部分"),
    "users.count": ("{count} users with memories", "共 {count} 个有记忆的用户"),
    "users.total": ("Memories", "记忆数"),
    "users.none": ("No user has memories yet.", "还没有任何用户的记忆。"),
    "server.title": ("The whole store", "整个存储"),
    # overview
    "overview.counts": ("Memories by layer and category", "按层级和类别统计的记忆"),
    "overview.total": ("All memories", "全部记忆"),
    "overview.agents": ("Agents (characters)", "角色（智能体）"),
    "overview.runs": ("Runs (sessions)", "会话（run）"),
    "overview.none": ("None.", "无。"),
    "overview.more": ("and {count} more", "另有 {count} 个"),
    "chart.retention": ("Retention now and without recall in 7 and 30 days", "当前保持率，以及 7 天和 30 天后（期间未被回忆）的保持率"),
    "chart.retention_explain": ("{count} memories (messages kept as evidence left out) by retention R = e^(−t/S), "
                                "t the days since last written or recalled, S the strength from importance, "
                                "recalls and kind. Core and system memories do not fade.",
                                "共 {count} 条记忆（不含作为证据保存的原始消息），按保持率 R = e^(−t/S) 分组："
                                "t 为距上次写入或回忆的天数，S 为由重要性、回忆次数和类型决定的强度。核心记忆和系统记忆不会衰减。"),
    "chart.now": ("now", "现在"),
    "chart.in_7_days": ("in 7 days", "7 天后"),
    "chart.in_30_days": ("in 30 days", "30 天后"),
    "chart.layers": ("Layer sizes", "各层级规模"),
    "chart.layers_over_time": ("Layer sizes after each maintenance pass", "每次维护后的各层级规模"),
    # maintenance passes
    "passes.title": ("Last maintenance passes", "最近的维护任务"),
    "passes.explain": ("What each lifecycle pass did to this user's memories (the server runs one every "
                       "JIYI_MAINTENANCE_INTERVAL seconds; POST /maintain or `jiyi maintain` runs one now).",
                       "每次生命周期维护对该用户记忆的处理（服务每隔 JIYI_MAINTENANCE_INTERVAL 秒运行一次；"
                       "POST /maintain 或 `jiyi maintain` 可立即运行）。"),
    "passes.none": ("No maintenance pass has run yet.", "尚未运行过维护任务。"),
    "passes.at": ("When (UTC)", "时间（UTC）"),
    "passes.processed": ("Looked at", "处理"),
    "passes.forgotten": ("Forgotten", "遗忘"),
    "passes.merged": ("Merged", "合并"),
    "passes.promoted": ("Promoted", "提升"),
    "passes.moved": ("Moved", "转层"),
    "passes.abstracted": ("Abstracted", "抽象"),
    "passes.conflicts": ("Conflicts", "冲突"),
    "passes.purged": ("Purged", "清除"),
    "passes.compression": ("Compression", "压缩比"),
    "passes.seconds": ("Seconds", "耗时（秒）"),
    # extraction queue
    "queue.title": ("Extraction queue", "提取队列"),
    "queue.explain": ("Chat turns waiting for their facts to be extracted. A failed turn used up its LLM attempts "
                      "(the offline rules stood in); retry runs it once more.",
                      "等待提取事实的对话轮次。失败的轮次已用完 LLM 重试次数（已由离线规则代为提取）；点“重试”会再运行一次。"),
    "queue.empty": ("Nothing is waiting, retrying or failed.", "没有等待中、重试中或失败的轮次。"),
    "queue.event": ("Event", "事件"),
    "queue.status": ("Status", "状态"),
    "queue.attempts": ("Attempts", "尝试次数"),
    "queue.next_attempt": ("Next attempt", "下次尝试"),
    "queue.error": ("Last error", "最近错误"),
    "turn.queued": ("Pending", "等待中"),
    "turn.processing": ("Running", "处理中"),
    "turn.retry": ("Retrying", "重试中"),
    "turn.done": ("Done", "已完成"),
    "turn.failed": ("Failed", "失败"),
    # memories
    "memories.count": ("{count} memories", "共 {count} 条记忆"),
    "memories.none": ("No memory matches.", "没有符合条件的记忆。"),
    "memories.deleted_note": ("deleted, not yet purged (they can be restored)", "已删除但尚未清除（可以恢复）"),
    "filter.text": ("Text contains", "内容包含"),
    "filter.text_hint": ("words in the memory", "记忆中的文字"),
    "filter.any": ("any", "全部"),
    "filter.any_but_messages": ("any (messages apart)", "全部（不含原始消息）"),
    "filter.deleted": ("Deleted ones", "已删除的"),
    "filter.page_size": ("Per page", "每页"),
    "pager.first": ("« First", "« 首页"),
    "pager.previous": ("‹ Previous", "‹ 上一页"),
    "pager.next": ("Next ›", "下一页 ›"),
    "pager.last": ("Last »", "末页 »"),
    "pager.page_of": ("Page {page} of {pages}", "第 {page} 页，共 {pages} 页"),
    # fields
    "field.id": ("ID", "ID"),
    "field.user_id": ("User", "用户"),
    "field.agent_id": ("Agent", "角色"),
    "field.run_id": ("Run", "会话"),
    "field.content": ("Memory", "记忆内容"),
    "field.category": ("Category", "类别"),
    "field.categories": ("Topics", "话题"),
    "field.layer": ("Layer", "层级"),
    "field.memory_type": ("Type", "类型"),
    "field.importance": ("Importance", "重要性"),
    "field.retention": ("Retention now", "当前保持率"),
    "field.access_count": ("Recalls", "回忆次数"),
    "field.confidence": ("Confidence", "置信度"),
    "field.source": ("Source", "来源"),
    "field.tags": ("Tags", "标签"),
    "field.metadata": ("Metadata", "元数据"),
    "field.created_at": ("Created", "创建时间"),
    "field.updated_at": ("Updated", "更新时间"),
    "field.last_accessed_at": ("Last recalled", "最近回忆"),
    "field.deleted_at": ("Deleted", "删除时间"),
    "field.event_time": ("Happened", "发生时间"),
    "field.expiration_date": ("Expires", "过期时间"),
    "field.version": ("Version", "版本"),
    "layer.working": ("Working", "工作记忆"),
    "layer.short_term": ("Short-term", "短期记忆"),
    "layer.long_term": ("Long-term", "长期记忆"),
    # mem0's categories (a memory's topics)
    "topic.personal_details": ("Personal details", "个人信息"),
    "topic.family": ("Family", "家庭"),
    "topic.professional_details": ("Work & study", "工作学业"),
    "topic.sports": ("Sports", "运动"),
    "topic.travel": ("Travel", "旅行"),
    "topic.food": ("Food", "饮食"),
    "topic.music": ("Music", "音乐"),
    "topic.health": ("Health", "健康"),
    "topic.technology": ("Technology", "科技"),
    "topic.hobbies": ("Hobbies", "爱好"),
    "topic.fashion": ("Fashion", "时尚"),
    "topic.entertainment": ("Entertainment", "娱乐"),
    "topic.milestones": ("Milestones", "人生大事"),
    "topic.user_preferences": ("Preferences", "偏好"),
    "topic.misc": ("Other", "其他"),
    "category.system": ("System", "系统"),
    "category.core": ("Core", "核心"),
    "category.fact": ("Fact", "事实"),
    "category.episode": ("Episode", "情节摘要"),
    "category.message": ("Message", "原始消息"),
    "type.episodic": ("Episodic", "情景"),
    "type.semantic": ("Semantic", "语义"),
    "type.preference": ("Preference", "偏好"),
    "type.fact": ("Fact", "事实"),
    "type.procedural": ("Procedural", "程序性"),
    "source.user": ("the user", "用户"),
    "source.assistant": ("the assistant", "助手"),
    "source.system": ("the system", "系统"),
    "source.background": ("inferred", "推断"),
    "role.user": ("User", "用户"),
    "role.assistant": ("Assistant", "助手"),
    "role.system": ("System", "系统"),
    "role.tool": ("Tool", "工具"),
    # search
    "search.title": ("Search with explain", "检索并解释"),
    "search.placeholder": ("What to look for in this user's memories", "在该用户的记忆中检索什么"),
    "search.top_k": ("Results", "结果数"),
    "search.not_a_review": ("Searching here is an inspection: the memories found do not count as recalled.",
                            "此处检索只是查看：找到的记忆不计入回忆次数。"),
    "search.timings": ("Timings", "耗时"),
    "search.candidates": ("{path}: {count} candidates", "{path}：{count} 个候选"),
    "search.score": ("Score", "得分"),
    "search.fused": ("Fused", "融合分"),
    "search.rank": ("Rank", "排名"),
    "search.path_score": ("Raw", "原始分"),
    "search.relevance": ("Relevance", "相关度"),
    "search.weights": ("Weighed by", "加权因子"),
    "search.none": ("Nothing found.", "没有找到。"),
    "search.explain_note": ("Fused: the paths' relevance-weighted reciprocal ranks; Score: the fused score weighed "
                            "by retention, importance and recency (at most a quarter of it).",
                            "融合分：各检索路径按相关度加权的倒数排名之和；得分：融合分再按保持率、重要性和新近度加权（最多影响四分之一）。"),
    "path.vector": ("Vector", "向量"),
    "path.keyword": ("Keyword (BM25)", "关键词（BM25）"),
    "path.rules": ("Rules", "规则"),
    "weight.retention": ("retention", "保持率"),
    "weight.importance": ("importance", "重要性"),
    "weight.recency": ("recency", "新近度"),
    "weight.message": ("message", "原始消息"),
    "weight.episode": ("episode", "情节摘要"),
    "weight.now": ("now", "当下"),
    "weight.rerank": ("rerank", "重排"),
    "timing.embed_ms": ("embedding", "向量化"),
    "timing.vector_ms": ("vector", "向量检索"),
    "timing.keyword_ms": ("keyword", "关键词检索"),
    "timing.rules_ms": ("rules", "规则"),
    "timing.fuse_ms": ("fusion", "融合"),
    "timing.rerank_ms": ("rerank", "重排"),
    "timing.total_ms": ("total", "总计"),
    # context
    "context.title": ("Query enhancement of /context", "/context 的查询增强"),
    "context.explain": ("Paste a conversation (lines starting with user: or assistant:, or a JSON list of "
                        "messages): the stages /context would run for its last user message, what each searched and "
                        "found, and the memory block it would inject.",
                        "粘贴一段对话（每行以 user: 或 assistant: 开头，或 JSON 格式的消息列表）：显示 /context 针对最后一条用户消息"
                        "会运行的各个阶段、每个阶段检索了什么、找到了什么，以及最终注入的记忆块。"),
    "context.placeholder": ("user: 我最近睡不好\nassistant: 怎么了？\nuser: 那个事情后来怎么样了？",
                            "user: 我最近睡不好\nassistant: 怎么了？\nuser: 那个事情后来怎么样了？"),
    "context.rewrite": ("Let the LLM rewrite a weak question (if one is configured)", "允许 LLM 改写含糊的问题（如已配置）"),
    "context.summary": ("{messages} messages, recalled in {ms} ms", "{messages} 条消息，召回耗时 {ms} 毫秒"),
    "context.stage": ("Stage", "阶段"),
    "context.outcome": ("Outcome", "结果"),
    "context.query": ("Query searched", "检索的查询"),
    "context.best": ("Best relevance", "最高相关度"),
    "context.found": ("Relevant", "相关条数"),
    "context.ms": ("ms", "毫秒"),
    "context.detail": ("Why", "说明"),
    "context.injected": ("Memories that would be injected", "将被注入的记忆"),
    "context.nothing": ("Nothing relevant: the reply would go ahead without memories.", "没有相关记忆：回复将不带记忆进行。"),
    "stage.question": ("The question", "问题本身"),
    "stage.context": ("The recent conversation", "最近的对话"),
    "stage.rewrite": ("LLM rewrite", "LLM 改写"),
    "outcome.hit": ("found", "命中"),
    "outcome.miss": ("nothing relevant", "无相关"),
    "outcome.skipped": ("skipped", "跳过"),
    "outcome.error": ("error", "出错"),
    "outcome.timeout": ("timed out", "超时"),
    # one memory
    "memory.title": ("Memory", "记忆"),
    "memory.deleted": ("Deleted {at}. Why:", "已于 {at} 删除。原因："),
    "memory.purge_at": ("Its text is purged for good after {at}; until then it can be restored.",
                        "{at} 之后其内容将被永久清除；在此之前可以恢复。"),
    "memory.actions": ("Change it", "修改"),
    "memory.edit_label": ("Text", "内容"),
    "memory.edit_note": ("Saving re-embeds the text and keeps the old one in the history.",
                         "保存后会重新计算向量，旧内容保留在历史记录中。"),
    "memory.delete_reason": ("Reason for deleting", "删除原因"),
    "memory.delete_reason_hint": ("optional, kept in the history", "可选，会记录在历史中"),
    "memory.promote_note": ("Core memories live in the long-term layer and never fade.", "核心记忆位于长期记忆层，永不衰减。"),
    "memory.restore_reason": ("Reason for restoring", "恢复原因"),
    "done.edited": ("Saved: the memory was re-embedded and an UPDATE row added to its history.",
                    "已保存：记忆已重新向量化，历史中新增一条 UPDATE 记录。"),
    "done.deleted": ("Deleted. It can be restored until it is purged.", "已删除。在被永久清除之前可以恢复。"),
    "done.restored": ("Restored: the memory is searchable again.", "已恢复：该记忆可以再次被检索到。"),
    "done.promoted": ("Promoted to a core memory.", "已提升为核心记忆。"),
    "done.renamed": ("Renamed: the old name stays an alias.", "已改名：旧名字保留为别称。"),
    "done.merged": ("Merged: its aliases, relations and memories are this entity's now.",
                    "已合并：它的别称、关系和记忆都归入了这个实体。"),
    "done.closed": ("Closed: the relation stays in the history with when it ended.",
                    "已结束：这条关系连同结束时间保留在历史里。"),
    # why remembered
    "why.title": ("Why it is remembered", "为什么记得这件事"),
    "why.messages": ("What was said", "原话"),
    "why.no_messages": ("No source message is recorded (added as text, or imported).", "没有记录来源消息（直接以文本添加或导入）。"),
    "why.turns": ("The turn that made it", "产生它的对话轮次"),
    "why.no_turn": ("It was not made by an extracted turn (an infer=false add, an import, or the lifecycle).",
                    "它不是由对话提取产生的（infer=false 添加、导入或生命周期生成）。"),
    "why.extractor": ("Extracted by", "提取方式"),
    "why.did": ("What the turn did to it", "该轮次对它的操作"),
    "why.other_memories": ("kept its messages (this memory came from them)", "保存了其消息（本记忆来源于此）"),
    "why.sources": ("Merged or abstracted from", "由以下记忆合并或抽象而来"),
    "why.source_deleted": ("folded in", "已并入"),
    "why.source_purged": ("purged", "已清除"),
    "why.related": ("related", "相关"),
    "why.history": ("History", "历史记录"),
    "why.reason": ("why", "原因"),
    "why.no_history": ("No history rows.", "没有历史记录。"),
    "extractor.llm": ("the LLM", "LLM"),
    "extractor.offline": ("offline rules", "离线规则"),
    "extractor.offline-fallback": ("offline rules (the LLM failed)", "离线规则（LLM 失败时）"),
    "event.ADD": ("ADD", "新增"),
    "event.UPDATE": ("UPDATE", "更新"),
    "event.DELETE": ("DELETE", "删除"),
    "event.NONE": ("NONE", "无变化"),
    "event.BOOST": ("BOOST", "强化"),
    "event.PROMOTE": ("PROMOTE", "提升"),
    "event.MOVE": ("MOVE", "转层"),
    "event.MERGE": ("MERGE", "合并"),
    "event.KEEP": ("KEEP", "保留"),
    "event.RESTORE": ("RESTORE", "恢复"),
    "event.CLOSE": ("CLOSE", "结束"),
    # errors
    "status.400": ("Bad request", "请求有误"),
    "status.401": ("Sign-in needed", "需要登录"),
    "status.403": ("Not allowed", "无权操作"),
    "status.404": ("Not found", "未找到"),
    "status.409": ("Changed meanwhile", "已被修改"),
    "status.413": ("Too large", "内容过大"),
    "status.429": ("Too many requests", "请求过于频繁"),
    "status.501": ("Not supported", "不支持"),
    "status.503": ("Unavailable", "服务暂不可用"),
    "status.other": ("Error", "错误"),
    "error.csrf": ("This form is out of date (or was sent from another site): reload the page and try again.",
                   "表单已过期（或来自其他站点）：请刷新页面后重试。"),
    "error.read_only": ("This key may read but not change memories.", "此密钥只能查看，不能修改记忆。"),
    "error.bad_key": ("That key is not one of this server's keys.", "该密钥不是此服务的有效密钥。"),
    "error.no_user": ("No user {user} here.", "这里没有用户 {user}。"),
    "error.no_memory": ("No memory {memory} here.", "这里没有记忆 {memory}。"),
    "error.no_event": ("No event {event} here.", "这里没有事件 {event}。"),
    "error.no_entity": ("No entity {entity} here.", "这里没有实体 {entity}。"),
    "error.graph_agent": ("The people and things in a user's life are made from every agent's memories: a key held "
                          "to agent {agent} does not reach them.",
                          "用户生活中的人物与事物来自所有角色的记忆：仅限角色 {agent} 的密钥无法查看。"),
    "error.unreachable": ("The jiyi server cannot be reached.", "无法连接 jiyi 服务。"),
    # the entity graph: people, pets, places… in a user's life
    "entities.explain": ("The people, pets, places, organisations, things and events jiyi knows from this user's "
                         "conversations, with their other names and how many memories mention them.",
                         "jiyi 从这个用户的对话中认识的人、宠物、地点、机构、物品和事件，以及它们的别称和提到它们的记忆数。"),
    "entities.count": ("{count} entities", "共 {count} 个实体"),
    "entities.none": ("No entities yet: they come from what the user says about the people and things in their "
                      "life.", "还没有实体：它们来自用户谈到的生活中的人和事。"),
    "field.kind": ("Kind", "类别"),
    "field.name": ("Name", "名称"),
    "field.aliases": ("Also called", "别称"),
    "field.memories": ("Memories", "记忆数"),
    "field.current_relations": ("Current relations", "当前关系"),
    "field.relation": ("Relation", "关系"),
    "field.status": ("Status", "状态"),
    "field.valid_at": ("Since", "开始时间"),
    "field.invalid_at": ("Until", "结束时间"),
    "kind.person": ("person", "人物"),
    "kind.pet": ("pet", "宠物"),
    "kind.place": ("place", "地点"),
    "kind.organisation": ("organisation", "机构"),
    "kind.thing": ("thing", "物品"),
    "kind.event": ("event", "事件"),
    "kind.user": ("the user", "用户本人"),
    "relation.current": ("current", "当前"),
    "relation.closed": ("ended", "已结束"),
    "relation.ended": ("ended", "已结束"),
    "entity.user_node": ("{user} (the user)", "{user}（用户本人）"),
    "entity.picture_label": ("{name} and the entities related to it", "{name} 及与之相关的实体"),
    "entity.neighbours": ("Related to", "关联"),
    "entity.neighbours_explain": ("Every entity one relation away; an arrow points from who the relation is about "
                                  "(\"A brother_of B\": A is B's brother), a dashed line is a relation that ended.",
                                  "一步之内的所有关联实体；箭头从关系的主体指出（“A brother_of B”：A 是 B 的兄弟），"
                                  "虚线表示已结束的关系。"),
    "entity.more_neighbours": ("and {count} more, in the table below", "另有 {count} 个，见下表"),
    "entity.relations": ("Relations over time", "关系的变化"),
    "entity.relations_explain": ("Current relations first; an ended one keeps when it began and ended. Each lists "
                                 "the memories it came from.", "当前关系在前；已结束的关系保留开始和结束时间。"
                                 "每条关系都列出它来自哪些记忆。"),
    "entity.behind": ("From the memories", "来自记忆"),
    "entity.memory_deleted": ("deleted", "已删除"),
    "entity.memory_gone": ("no longer kept", "已不存在"),
    "entity.no_relations": ("No relations.", "没有关系。"),
    "entity.mentioned_in": ("Memories that mention it", "提到它的记忆"),
    "entity.no_memories": ("No live memory mentions it.", "没有现存的记忆提到它。"),
    "entity.correct": ("Correct", "纠正"),
    "entity.rename_label": ("Its name", "名称"),
    "entity.rename_note": ("The old name stays an alias, so what was said with it still finds this entity.",
                           "旧名字保留为别称，用旧名字说过的话仍能找到这个实体。"),
    "entity.merge_label": ("The same as {name}:", "与 {name} 是同一个："),
    "entity.merge_confirm": ("Merge it into {name}? Its aliases, relations and memories move here and it is gone; "
                             "this cannot be undone.", "把它合并进 {name}？它的别称、关系和记忆都会移到这里，"
                             "它本身将不再存在；此操作无法撤销。"),
    "entity.close_confirm": ("End this relation now? It stays in the history with when it ended.",
                             "现在结束这条关系？它会连同结束时间保留在历史里。"),
}
