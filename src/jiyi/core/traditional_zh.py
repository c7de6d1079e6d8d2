"""Traditional Chinese read as simplified by the entity rules: 長子志明在美國加州 is read as 长子志明在美国加州, so that
the rules' words (长子, 在, 美国) match. One character for one character, so a name found in the simplified text is
taken back from the same place in the text as written (志明的女兒 stays 女兒 in the graph).

Only characters whose traditional form differs and means one thing: 乾 (干 or 乾隆), 著 (着 or 著名), 隻 and 只 are
left as they are. Not a converter: the characters of the words the rules look for, and the common words around them.
"""

from __future__ import annotations

# traditional, simplified, in pairs
_PAIRS = (
    "與与 業业 東东 兩两 嚴严 個个 麗丽 麼么 義义 烏乌 樂乐 習习 鄉乡 書书 買买 亂乱 亞亚 親亲 倉仓 們们 會会 倫伦 "
    "優优 眾众 體体 兒儿 黨党 蘭兰 興兴 養养 內内 馮冯 準准 幾几 劉刘 剛刚 別别 勸劝 辦办 務务 區区 醫医 華华 單单 "
    "盧卢 衛卫 廠厂 廳厅 廈厦 縣县 雙双 發发 髮发 葉叶 號号 後后 呂吕 吳吴 園园 圖图 聖圣 場场 壞坏 塊块 處处 備备 "
    "頭头 奧奥 婦妇 媽妈 孫孙 學学 寧宁 寶宝 實实 賓宾 對对 導导 將将 爾尔 歲岁 島岛 師师 帶带 幫帮 幹干 廣广 莊庄 "
    "慶庆 開开 張张 強强 當当 錄录 徹彻 總总 懷怀 戀恋 悅悦 愛爱 戰战 戶户 報报 揚扬 換换 撾挝 攝摄 無无 舊旧 時时 "
    "暱昵 曉晓 暫暂 術术 雜杂 楊杨 傑杰 極极 構构 樓楼 檳槟 橫横 歡欢 氣气 匯汇 彙汇 漢汉 湯汤 沒没 滬沪 澤泽 潔洁 "
    "濟济 瀏浏 溫温 灣湾 濱滨 濰潍 靈灵 災灾 煙烟 熱热 爺爷 貓猫 現现 環环 電电 盤盘 監监 離离 種种 稱称 穩稳 筆笔 "
    "簽签 簡简 類类 納纳 紐纽 練练 組组 細细 終终 紹绍 經经 結结 給给 維维 綿绵 緬缅 網网 羅罗 職职 聯联 腦脑 臘腊 "
    "節节 蕪芜 蘇苏 蔭荫 萊莱 薩萨 蔣蒋 藍蓝 慮虑 見见 規规 覺觉 計计 訂订 認认 讓让 許许 論论 設设 訪访 證证 評评 "
    "識识 訴诉 診诊 試试 話话 該该 說说 請请 諾诺 讀读 誰谁 謝谢 譚谭 貴贵 費费 賀贺 賈贾 資资 贛赣 趙赵 躍跃 車车 "
    "轉转 輕轻 辭辞 邊边 達达 過过 邁迈 運运 還还 這这 進进 遠远 連连 遞递 鄧邓 郵邮 鄰邻 鄭郑 鄲郸 醬酱 裡里 裏里 "
    "鐘钟 鍾钟 錢钱 銀银 鋪铺 錫锡 鎮镇 長长 門门 問问 間间 閆闫 閨闺 陽阳 陰阴 陸陆 陳陈 隨随 難难 靜静 麵面 韋韦 "
    "韓韩 順顺 顧顾 頓顿 領领 頤颐 飛飞 飯饭 館馆 驛驿 驗验 魚鱼 魯鲁 鯨鲸 雞鸡 鵡鹉 鸚鹦 麥麦 黃黄 齊齐 龍龙 龔龚 "
    "龜龟 來来 國国 臺台 颱台 畢毕 於于 餘余 員员 聽听 關关 樣样 機机 為为 歸归 護护 憶忆 顆颗 嗎吗 "
    "啟启 從从 歷历 雲云 鳥鸟 衝冲 聞闻 錯错 變变 紀纪 約约 級级 紅红 線线 "
    "參参 壽寿 週周 掛挂 協协 產产 團团 絕绝 輩辈 蘋苹 萬万 廟庙 陣阵"
)
_TABLE = str.maketrans({pair[0]: pair[1] for pair in _PAIRS.split() if pair[0] != pair[1]})
_TRADITIONAL = frozenset(map(chr, _TABLE))  # maketrans keys are code points


def has_traditional(text: str) -> bool:
    return any(ch in _TRADITIONAL for ch in text)


def to_simplified(text: str) -> str:
    """The text with the characters above simplified; as long as the text, character for character."""
    return text.translate(_TABLE)


def as_written(said: str, simplified: str, written: str) -> str:
    """What `said` (read in `simplified`) was in `written`, the same text as the user wrote it; `said` itself when it
    is not in the text (a word the rules put together, 我姐)."""
    at = simplified.find(said)
    return written[at:at + len(said)] if at >= 0 else said
