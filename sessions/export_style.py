"""The export page's stylesheet (inline in the page: it loads nothing). Narrow screens get the same
page: long lines wrap, wide tables scroll inside their own box, images shrink to fit."""

STYLE = """
*{box-sizing:border-box}
body{font:15px/1.55 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;
color:#1d1f23;overflow-wrap:anywhere}
main{max-width:960px;margin:0 auto;padding:24px}
header{border-bottom:1px solid #d8dbe0;margin-bottom:16px}
h1{font-size:20px;margin:0 0 8px}
.meta{color:#5b616b;font-size:12px}
.msg{background:#fff;border:1px solid #e1e4e8;border-radius:6px;padding:10px 14px;margin:10px 0;min-width:0}
.role{font-size:11px;font-weight:600;text-transform:uppercase;color:#5b616b;margin-bottom:4px}
.user{border-left:4px solid #3b82f6}.assistant{border-left:4px solid #10b981}
.tool{border-left:4px solid #a855f7}.tool.error{border-left-color:#ef4444}
.note{background:#fffbea;border-left:4px solid #f59e0b}.bash{border-left:4px solid #64748b}
.text{white-space:pre-wrap}
pre,.diff{white-space:pre-wrap;overflow-wrap:anywhere;background:#f1f3f5;padding:8px;border-radius:4px;
font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin:6px 0}
pre code{font:inherit}
.md p{margin:6px 0}.md h1,.md h2,.md h3,.md h4{margin:12px 0 6px;font-size:16px}
.md code{background:#f1f3f5;border-radius:3px;padding:0 3px;font:13px ui-monospace,SFMono-Regular,Menlo,monospace}
.md pre code{background:none;padding:0}
.md table{border-collapse:collapse;margin:8px 0;display:block;max-width:100%;overflow-x:auto}
.md th,.md td{border:1px solid #d8dbe0;padding:4px 8px;overflow-wrap:normal}
.md th{background:#f1f3f5}
.md blockquote{margin:6px 0;padding-left:10px;border-left:3px solid #d8dbe0;color:#5b616b}
.url{color:#5b616b;font-size:12px}.link{text-decoration:underline}
details summary{cursor:pointer;color:#5b616b}
.thinking{color:#5b616b;font-style:italic;margin:4px 0}
.call{margin:8px 0}
.call-head{font-size:12px;color:#5b616b}.tool-name{font-weight:600;color:#7e22ce}
.path{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
.diff{padding:6px 0}.diff div{padding:0 8px;min-height:1.45em}
.diff .add{background:#e6ffec;color:#116329}.diff .del{background:#ffebe9;color:#82071e}
.diff .hunk{color:#0550ae;background:#ddf4ff}
pre.term{background:#1e1e1e;color:#e5e5e5}.term .prompt{color:#4ade80}
pre.plain{background:#f8f9fa}
.error-text,.tool.error pre{color:#b91c1c}
img{max-width:100%;height:auto;border:1px solid #e1e4e8;border-radius:4px}
@media (max-width:600px){main{padding:10px}.msg{padding:8px 10px}}
"""
