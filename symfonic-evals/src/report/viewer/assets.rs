//! The viewer's inline style and scripts: every page carries its own, so a
//! page opened from `file://` needs no server and loads nothing.

/// The style every page shares.
pub(super) const STYLE: &str = "\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2330;background:#f6f7f9}\
header{background:#1d2330;color:#fff;padding:12px 20px}header a{color:#9cc3ff}\
main{padding:12px 20px;max-width:1400px}\
h1{font-size:18px;margin:4px 0}h2{font-size:16px;margin:18px 0 6px}h3{font-size:14px;margin:10px 0 4px}\
table{border-collapse:collapse;background:#fff;margin:6px 0}\
th,td{border:1px solid #d8dce3;padding:3px 7px;text-align:left;vertical-align:top}\
th{background:#eef0f4;font-weight:600}\
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}\
pre{margin:0;white-space:pre-wrap;word-break:break-word}\
.verdict{display:inline-block;padding:1px 8px;border-radius:9px;font-weight:600;font-size:12px}\
.v-passed{background:#d7f5dd;color:#0d5a1c}.v-failed{background:#fddede;color:#8a1010}\
.v-other{background:#fdf1cf;color:#6b4b00}.v-caught{background:#e3e9f7;color:#233a8a}\
.cell{display:inline-block;min-width:22px;text-align:center;border-radius:4px;text-decoration:none;font-weight:700}\
.cell.ok{background:#d7f5dd;color:#0d5a1c}.cell.bad{background:#fddede;color:#8a1010}.cell.none{color:#999}\
.scenario,.trial,.step{background:#fff;border:1px solid #d8dce3;border-radius:6px;margin:8px 0;padding:6px 10px}\
.scenario.failed{border-left:4px solid #c62828}.scenario.passed{border-left:4px solid #2e7d32}\
.trial.failed>summary,.step.failed>.step-head{color:#8a1010}\
.step{margin-left:12px}.step.failed{background:#fff7f7}\
.targeted{outline:3px solid #f0a000}\
.first{background:#fff1c2;padding:1px 6px;border-radius:4px;font-weight:600}\
.nw{white-space:nowrap}.meta{color:#566}.badge{background:#e6ecff;color:#233a8a;border-radius:4px;padding:0 5px;font-size:11px}\
.only-failed .hide-ok{display:none}\
#failure{background:#fff;border:2px solid #c62828;border-radius:6px;padding:8px 12px;margin:10px 0}\
label.filter{display:inline-block;margin:8px 0;font-weight:600}\
";

/// The overview's own additions to [`STYLE`].
pub(super) const OVERVIEW_STYLE: &str = "\
#verdict-line{font-size:16px;font-weight:600;margin:6px 0}\
#verdict-line.all-good{color:#9be7a9}#verdict-line.not-good{color:#ffb3b3}\
.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:10px 0}\
.filters label{font-weight:600}.filters select,.filters input{font:inherit;padding:2px 4px}\
details.group{background:#fff;border:1px solid #d8dce3;border-radius:6px;margin:10px 0;padding:4px 10px}\
details.group>summary{font-weight:600;cursor:pointer;padding:4px 0}\
details.legend{margin:6px 0}details.legend>summary{font-weight:600;cursor:pointer}\
table.matrix td.c{min-width:120px}table.matrix td.c a{text-decoration:none}\
.o{display:inline-block;padding:1px 6px;border-radius:4px;font-weight:600;font-size:12px}\
.o-passed{background:#d7f5dd;color:#0d5a1c}.o-caught{background:#e3e9f7;color:#233a8a}\
.o-failed{background:#fddede;color:#8a1010;outline:2px solid #c62828}.o-other{background:#fdf1cf;color:#6b4b00}\
.trend{vertical-align:middle;margin-left:4px}.est{font-size:11px;color:#566}\
tr.hidden,details.group.hidden{display:none}\
.probe-list td:first-child{white-space:nowrap}\
";

/// The run page's script: the failed-only filter, and revealing the step a
/// link's anchor names (opening the trials around it).
pub(super) const SCRIPT: &str = "\
(function(){var b=document.body;var f=document.getElementById('only-failed');\
function apply(){if(f.checked){b.classList.add('only-failed');}else{b.classList.remove('only-failed');}}\
if(f){f.addEventListener('change',apply);apply();}\
function reveal(){var h=decodeURIComponent(location.hash.slice(1));if(!h){return;}\
var t=document.getElementById(h);if(!t){b.setAttribute('data-anchor-missing',h);return;}\
var old=document.querySelector('.targeted');if(old){old.classList.remove('targeted');}\
t.classList.add('targeted');var d=t.closest('details');while(d){d.open=true;d=d.parentElement.closest('details');}\
b.setAttribute('data-anchor-found',h);t.scrollIntoView();}\
window.addEventListener('hashchange',reveal);reveal();\
var m=document.getElementById('viewer-status');if(m){m.textContent='ready';}b.setAttribute('data-viewer','ready');})();";

/// The overview's script: every filter and the search hide the rows that
/// do not match, and a group left with no row is hidden too. A link can
/// carry them in its fragment (`index.html#q=twin&outcome=failed`; also
/// `pack`, `deployment`, `probe`).
pub(super) const OVERVIEW_SCRIPT: &str = "\
(function(){var b=document.body;\
function v(id){var e=document.getElementById(id);return e?e.value:'';}\
function apply(){var pack=v('f-pack'),dep=v('f-deployment'),ver=v('f-verdict'),probe=v('f-probe'),q=v('f-search').toLowerCase();\
var shown=0;document.querySelectorAll('details.group').forEach(function(g){var left=0;\
g.querySelectorAll('tr.row').forEach(function(r){var d=r.dataset;\
var ok=(!pack||(' '+d.packs+' ').indexOf(' '+pack+' ')>=0)&&(!dep||d.deployment===dep)\
&&(!ver||(' '+d.outcomes+' ').indexOf(' '+ver+' ')>=0)&&(!probe||(' '+d.probes+' ').indexOf(' '+probe+' ')>=0)\
&&(!q||d.search.indexOf(q)>=0);r.classList.toggle('hidden',!ok);if(ok){left++;}});\
g.classList.toggle('hidden',left===0);shown+=left;});\
var c=document.getElementById('shown');if(c){c.textContent=String(shown);}}\
['f-pack','f-deployment','f-verdict','f-probe'].forEach(function(id){var e=document.getElementById(id);if(e){e.addEventListener('change',apply);}});\
var s=document.getElementById('f-search');if(s){s.addEventListener('input',apply);}\
var h=new URLSearchParams(location.hash.slice(1));\
[['q','f-search'],['pack','f-pack'],['deployment','f-deployment'],['outcome','f-verdict'],['probe','f-probe']].forEach(function(p){\
var x=h.get(p[0]),e=document.getElementById(p[1]);if(x!==null&&e){e.value=x;}});\
apply();var m=document.getElementById('viewer-status');if(m){m.textContent='ready';}b.setAttribute('data-viewer','ready');})();";
