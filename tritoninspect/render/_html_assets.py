"""The HTML report's stylesheet and its small optional script, inlined into every page.

No web fonts, no external anything: the page must open from `file://` with no network.
The script only adds conveniences (search, expand/collapse all, opening the code block a
link points into); every section is readable with scripting off.
"""

from __future__ import annotations

CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;--accent:#0969da;
--kernel:#bf5a00;--kernel-bg:#fff1e0;--copy:#cf222e;--copy-bg:#ffebe9;--ind:#0550ae;--ind-bg:#ddf4ff;
--ok:#1a7f37;--warn-bg:#fff8c5;--warn:#7d4e00;--add:#dafbe1;--del:#ffebe9;--mark:#8250df}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg)}
header.top{padding:14px 24px 10px;border-bottom:1px solid var(--line);background:var(--soft)}
header.top h1{font-size:20px;margin:0 0 2px}
header.top .meta{color:var(--muted);font-size:13px}
.banner{margin:8px 0 0;padding:6px 12px;border-radius:6px;font-weight:600;display:inline-block}
.banner.compile-only{background:var(--warn-bg);color:var(--warn);border:1px solid #d4a72c}
.banner.gpu{background:#dafbe1;color:var(--ok);border:1px solid #4ac26b}
.banner.failed{background:var(--del);color:var(--copy);border:1px solid #ff8182;display:block}
nav.toc{position:sticky;top:0;z-index:5;background:var(--bg);border-bottom:1px solid var(--line);padding:6px 24px;display:flex;gap:14px;align-items:center;flex-wrap:wrap}
nav.toc a{color:var(--accent);text-decoration:none;font-weight:500}
nav.toc .tools{margin-left:auto;display:none;gap:8px}
html.js nav.toc .tools{display:flex}
nav.toc input{font:inherit;padding:2px 8px;border:1px solid var(--line);border-radius:6px;width:14em}
nav.toc button{font:inherit;font-size:12px;padding:2px 8px;border:1px solid var(--line);border-radius:6px;background:var(--soft);cursor:pointer}
main{padding:8px 24px 40px;max-width:1500px}
section,[id]{scroll-margin-top:48px}
h2{font-size:18px;border-bottom:1px solid var(--line);padding-bottom:4px;margin-top:28px}
h3{font-size:16px;margin:18px 0 6px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace;font-size:12.5px}
.muted{color:var(--muted)}
.pill{display:inline-block;padding:0 8px;border-radius:10px;font-size:12px;font-weight:600;border:1px solid var(--line);background:var(--soft);margin-right:4px}
.pill.hop,.pill.triton_op{background:#dafbe1;color:var(--ok);border-color:#4ac26b}
.pill.custom_op{background:#24292f;color:#fff;border-color:#24292f}
.pill.eager{background:var(--del);color:var(--copy);border-color:#ff8182}
.pill.changed{background:#fbefff;color:var(--mark);border-color:#c297ff}
.pill.error{background:var(--del);color:var(--copy);border-color:#ff8182}
.pill.warning{background:var(--warn-bg);color:var(--warn);border-color:#d4a72c}
div.finding{border-left:3px solid var(--line);padding:2px 0 2px 10px;margin:8px 0}
div.finding.error{border-left-color:#ff8182}
div.finding.warning{border-left-color:#d4a72c}
article.kernel{border:1px solid var(--line);border-radius:8px;padding:4px 16px 12px;margin:14px 0;background:var(--bg)}
article.kernel>h3{margin-top:10px}
.verdict{font-weight:500;margin:4px 0 8px}
table.facts,table.grid{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
table.facts th{text-align:left;color:var(--muted);font-weight:500;padding:2px 14px 2px 0;vertical-align:top}
table.facts td{padding:2px 0}
table.grid th,table.grid td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
table.grid th{background:var(--soft);font-weight:600}
table.grid tr.changed td{background:#fbefff}
.ne{color:var(--mark);font-weight:600}
ul.summaries{margin:6px 0 8px;padding-left:20px;font-weight:600}
.figs{display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start}
figure{margin:0;border:1px solid var(--line);border-radius:8px;padding:8px;background:#fcfcfd;max-width:100%;overflow-x:auto}
figcaption{font-size:13px;font-weight:600;margin-bottom:4px}
figcaption .sub{font-weight:400;color:var(--muted)}
svg.pic{display:block;max-width:none}
svg.pic text{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:12px;text-anchor:middle;fill:#1f2328}
svg.pic text.ns{font-size:10.5px;fill:#59636e}
svg.pic text.el{font-size:10.5px;text-anchor:start;fill:#59636e;paint-order:stroke;stroke:#fcfcfd;stroke-width:3px}
svg.pic .e{fill:none;stroke:#8c959f;stroke-width:1.4}
svg.pic .e-mutates{stroke:var(--kernel);stroke-width:2}
svg.pic .e-order{stroke:#c4cbd3;stroke-dasharray:2 4}
svg.pic .arrowhead{fill:#8c959f}
svg.pic .arrowhead-m{fill:var(--kernel)}
svg.pic .n rect{fill:#fff;stroke:#8c959f;stroke-width:1.2}
svg.pic .n-op rect{fill:#f6f8fa}
svg.pic .n-inductor rect{fill:var(--ind-bg);stroke:var(--ind)}
svg.pic .n-extern rect{fill:#eaeef2;stroke:#6e7781}
svg.pic .n-user rect{fill:var(--kernel-bg);stroke:var(--kernel);stroke-dasharray:4 2}
svg.pic .n-kernel rect{fill:var(--kernel-bg);stroke:var(--kernel);stroke-width:2.6}
svg.pic .n-kernel text.nl{font-weight:700;fill:#7a3700}
svg.pic .n-opaque rect{fill:#24292f;stroke:#000;stroke-width:2}
svg.pic .n-opaque text.nl,svg.pic .n-opaque text.ns{fill:#fff}
svg.pic .n-copy rect{fill:var(--copy-bg);stroke:var(--copy);stroke-width:2;stroke-dasharray:5 3}
svg.pic .n-copy text.nl{fill:var(--copy);font-weight:700}
svg.pic .n-alloc rect{fill:#fff;stroke:#afb8c1;stroke-dasharray:3 3}
svg.pic .n-alloc text{fill:#6e7781}
svg.pic .n-input rect,svg.pic .n-output rect{fill:#dafbe1;stroke:#4ac26b}
svg.pic .n.marked rect{stroke:var(--mark);stroke-width:3}
svg.pic .badge{fill:var(--mark);stroke:#fff;stroke-width:1.5}
svg.pic .e.marked{stroke:var(--mark);stroke-width:2.6;stroke-dasharray:7 3}
svg.pic .arrowhead-x{fill:var(--mark)}
svg.pic a:hover rect{filter:brightness(.93)}
.legend{display:flex;flex-wrap:wrap;gap:10px;font-size:12px;color:var(--muted);margin:4px 0 8px}
.legend span.sw{display:inline-block;width:22px;height:12px;border-radius:3px;vertical-align:middle;margin-right:4px;border:1.5px solid #8c959f}
.sw.kernel{background:var(--kernel-bg);border-color:var(--kernel)!important;border-width:2.5px!important}
.sw.inductor{background:var(--ind-bg);border-color:var(--ind)!important}
.sw.opaque{background:#24292f;border-color:#000!important}
.sw.copy{background:var(--copy-bg);border-color:var(--copy)!important;border-style:dashed!important}
.sw.op{background:#f6f8fa}
.sw.input{background:#dafbe1;border-color:#4ac26b!important;border-radius:8px!important}
.sw.marked{background:#fff;border-color:var(--mark)!important;border-width:3px!important}
details{border:1px solid var(--line);border-radius:6px;margin:6px 0;background:var(--bg)}
details>summary{cursor:pointer;padding:4px 10px;background:var(--soft);border-radius:6px;font-weight:600}
details[open]>summary{border-bottom:1px solid var(--line);border-radius:6px 6px 0 0}
pre.code{margin:0;padding:6px 0;overflow-x:auto;line-height:1.45;counter-reset:ln}
pre.code>span{display:block;padding:0 10px 0 0;white-space:pre;counter-increment:ln}
pre.code>span::before{content:counter(ln);display:inline-block;width:4.2em;padding-right:10px;text-align:right;color:#8c959f;user-select:none}
pre.code.diff>span::before{content:none}
pre.code>span.hit{background:var(--kernel-bg);box-shadow:inset 3px 0 0 var(--kernel)}
pre.code>span.at{background:#fff8c5;box-shadow:inset 3px 0 0 #d4a72c}
pre.code>span:target{background:#fbefff;box-shadow:inset 3px 0 0 var(--mark)}
pre.diff .add{background:var(--add)}
pre.diff .del{background:var(--del)}
pre.diff .hunk{color:var(--mark)}
.tk-k{color:#cf222e}.tk-s{color:#0a3069}.tk-c{color:#6e7781;font-style:italic}.tk-n{color:#0550ae}.tk-f{color:#8250df}.tk-o{color:#953800}
.break{border-left:4px solid #d4a72c;padding:2px 0 4px 12px;margin:14px 0}
ol.findings{padding-left:22px}
ol.findings>li{margin:8px 0 12px}
ol.findings p{margin:2px 0 4px;font-weight:500}
ol.findings p.alert{color:var(--copy)}
.pill.library{background:var(--warn-bg);color:var(--warn);border-color:#d4a72c;font-weight:500}
.cite{font-size:12px}
.hint{background:#ddf4ff;border:1px solid #54aeff;border-radius:6px;padding:6px 10px;margin:6px 0}
.reason{white-space:pre-wrap;color:var(--muted);font-size:12.5px}
.side-by-side{display:grid;grid-template-columns:repeat(var(--cols,2),minmax(0,1fr));gap:14px}
.side-by-side>div{min-width:0}
.side-head{font-weight:700;margin-bottom:4px}
.hidden-by-search{display:none!important}
footer{color:var(--muted);font-size:12px;padding:12px 24px;border-top:1px solid var(--line)}
"""

#: Optional conveniences; with scripting off the page is complete.
JS = """
document.documentElement.classList.add('js');
(function(){
  function openTo(hash){
    if(!hash||hash.length<2)return;
    var el=document.getElementById(decodeURIComponent(hash.slice(1)));
    for(var p=el;p;p=p.parentElement){if(p.tagName==='DETAILS')p.open=true;}
    if(el)el.scrollIntoView({block:'center'});
  }
  window.addEventListener('hashchange',function(){openTo(location.hash);});
  document.addEventListener('DOMContentLoaded',function(){
    openTo(location.hash);
    var all=document.querySelectorAll('details');
    var ex=document.getElementById('expand-all'),co=document.getElementById('collapse-all');
    if(ex)ex.addEventListener('click',function(){all.forEach(function(d){d.open=true;});});
    if(co)co.addEventListener('click',function(){all.forEach(function(d){d.open=false;});});
    var box=document.getElementById('search');
    if(box)box.addEventListener('input',function(){
      var q=box.value.trim().toLowerCase();
      document.querySelectorAll('[data-search]').forEach(function(el){
        var hit=!q||el.getAttribute('data-search').toLowerCase().indexOf(q)>=0;
        el.classList.toggle('hidden-by-search',!hit);
      });
    });
  });
})();
"""
