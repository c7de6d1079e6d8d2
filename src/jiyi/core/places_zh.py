"""Is a Chinese word a place? rjieba's part-of-speech tag says so for most (深圳 ns) but not for all: foreign cities
come out as names (温哥华, 波士顿 nr) and districts as common nouns (槐荫区, 道外区 n). So a place is a word tagged ns,
a word that ends in an administrative suffix (区, 县, 市, 省, 镇), or one of the countries and large cities below — the
places a user names as where someone lives or works, not a list of everything on a map."""

from __future__ import annotations

import rjieba

# Administrative units: 槐荫区, 昌平县, 佛山市. 州 and 城 are left out: 欧洲, 长城 are not where anyone lives.
_SUFFIXES = ("区", "县", "市", "省", "镇")
_NOT_PLACES = frozenset((
    "小区 社区 景区 园区 校区 市区 城区 郊区 山区 灾区 片区 街区 老区 "
    "新区 开发区 住宅区 超市 城市 菜市 股市 楼市 门市 夜市 乡镇 城镇 城中村 "
).split())
COUNTRIES = frozenset((
    "中国 美国 英国 法国 德国 日本 韩国 俄罗斯 加拿大 澳大利亚 新西兰 "
    "意大利 西班牙 葡萄牙 荷兰 比利时 瑞士 瑞典 挪威 丹麦 芬兰 爱尔兰 "
    "奥地利 波兰 希腊 土耳其 以色列 埃及 南非 印度 巴基斯坦 泰国 越南 "
    "马来西亚 新加坡 印度尼西亚 印尼 菲律宾 柬埔寨 缅甸 老挝 蒙古 哈萨克斯坦 "
    "巴西 阿根廷 墨西哥 智利 秘鲁 迪拜 阿联酋 沙特 卡塔尔 伊朗 乌克兰 捷克 "
    "匈牙利 冰岛 台湾 香港 澳门 "
).split())
CITIES = frozenset((
    # China: the municipalities, provincial capitals and the larger prefecture cities
    "北京 上海 天津 重庆 广州 深圳 杭州 南京 苏州 无锡 常州 南通 扬州 "
    "徐州 宁波 温州 绍兴 嘉兴 金华 台州 义乌 合肥 芜湖 安庆 福州 厦门 "
    "泉州 漳州 南昌 赣州 济南 青岛 烟台 潍坊 淄博 临沂 济宁 泰安 威海 "
    "郑州 洛阳 开封 周口 南阳 新乡 武汉 宜昌 襄阳 长沙 株洲 湘潭 岳阳 "
    "衡阳 东莞 佛山 珠海 中山 惠州 汕头 湛江 南宁 桂林 柳州 北海 海口 "
    "三亚 成都 绵阳 乐山 宜宾 贵阳 遵义 昆明 大理 丽江 西双版纳 拉萨 西安 "
    "咸阳 宝鸡 延安 兰州 西宁 银川 乌鲁木齐 呼和浩特 包头 石家庄 唐山 保定 "
    "秦皇岛 邯郸 太原 大同 沈阳 大连 鞍山 长春 吉林 哈尔滨 大庆 佳木斯 "
    "齐齐哈尔 牡丹江 宁德 莆田 景德镇 九江 "
    # abroad: the cities people move to, study in and visit most
    "纽约 洛杉矶 旧金山 西雅图 波士顿 芝加哥 休斯顿 华盛顿 费城 圣地亚哥 "
    "硅谷 多伦多 温哥华 蒙特利尔 伦敦 曼彻斯特 爱丁堡 巴黎 柏林 慕尼黑 "
    "法兰克福 阿姆斯特丹 米兰 罗马 马德里 巴塞罗那 维也纳 苏黎世 日内瓦 "
    "布鲁塞尔 斯德哥尔摩 哥本哈根 莫斯科 东京 大阪 京都 横滨 首尔 釜山 曼谷 "
    "清迈 河内 胡志明市 吉隆坡 槟城 雅加达 巴厘岛 马尼拉 金边 悉尼 墨尔本 "
    "布里斯班 珀斯 奥克兰 惠灵顿 孟买 新德里 班加罗尔 开罗 约翰内斯堡 开普敦 "
    "里约热内卢 圣保罗 布宜诺斯艾利斯 墨西哥城 "
).split())


# 家门口超市 ends in 市 as 佛山市 does and is a shop (浦东新区 ends in 新区 and is a place: only 市 is ambiguous so)
_NOT_PLACE_ENDS = tuple(sorted(w for w in _NOT_PLACES if w.endswith("市")))


def is_place(word: str) -> bool:
    """A place by the dictionary's tag, its administrative suffix or the lists above."""
    if len(word) < 2 or word in _NOT_PLACES or word.endswith(_NOT_PLACE_ENDS):
        return False
    if word in COUNTRIES or word in CITIES:
        return True
    if word.endswith(_SUFFIXES) and len(word) >= 3:
        return True
    tags = [tag for w, tag in rjieba.tag(word) if w.strip()]
    return tags == ["ns"]
